"""The advice of one join: the history attributed to teams and priced at the applied prices."""

from __future__ import annotations

from collections.abc import Iterable

from exporter.config.schema import Config
from exporter.gpu_names import canonical_model
from exporter.ledger.advice.advise import AdviceSet, Prices, advise
from exporter.ledger.attribution import Attributor
from exporter.ledger.prices.applied import AppliedPrice
from exporter.ledger.prices.build import FLAVOR, MODEL
from exporter.sources.dcgm_history.records import History

__all__ = ["team_advice"]


def team_advice(
    config: Config, attributor: Attributor, history: History, applied: Iterable[AppliedPrice]
) -> AdviceSet | None:
    """Advice at the prices the ledger applied (chargeback_gpu_price_per_hour's); None without
    an `advice:` section."""
    if config.advice is None:
        return None
    prices = tuple(applied)
    by_model = {canonical_model(p.name): p.price for p in prices if p.kind == MODEL}
    by_flavor = {p.name: p.price for p in prices if p.kind == FLAVOR}
    return advise(
        history,
        config.advice,
        team_of=lambda d: attributor.place(d.namespace, d.labels).team,
        queue_team=attributor.team_for_queue,
        prices=Prices(lambda m: by_model.get(canonical_model(m)), by_flavor.get),
        charges_quota=config.idle_policy.needs_kueue,
    )
