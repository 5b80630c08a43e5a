"""What the ledger's sources recorded, by UTC day, in the form bills are matched against."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from exporter.ledger.reconcile.models import bill_model, gateway_provider
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost.snapshot import OpenCostSnapshot

__all__ = ["Recorded", "recorded_of"]


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """The gateway's spend per (provider, model key, UTC day) and OpenCost's cluster cost per
    day, in the exporter's currency; `llm` is None without the gateway's days (LiteLLM down,
    or a proxy whose breakdowns give no spend by date), `cluster` when OpenCost was not read
    by day: a bill is then not compared, rather than compared with nothing."""

    llm: Mapping[tuple[str, str, date], float] | None = field(default_factory=dict)
    cluster: Mapping[date, float] | None = None
    cluster_month: float | None = None  # OpenCost's month as read, without it None
    unknown_provider: float = 0.0  # gateway spend no rule gave a provider


def recorded_of(
    litellm: LiteLLMSnapshot | None,
    opencost: OpenCostSnapshot | None,
    publishers: Mapping[str, str],
) -> Recorded:
    """The records of both sources; `publishers` is each declared model's publisher by name."""
    llm: dict[tuple[str, str, date], float] = defaultdict(float)
    unknown = 0.0
    if litellm is not None:
        rate = litellm.exchange_rate
        for (day, public, deployment), spend in sorted(litellm.daily_spend.items()):
            provider = gateway_provider(public, deployment, publishers)
            if not provider:
                unknown += spend * rate
                continue
            llm[(provider, bill_model(deployment or public), day)] += spend * rate
    cluster, month = None, None
    if opencost is not None:
        month = opencost.month.total()
    if opencost is not None and opencost.days:
        by_day: dict[date, float] = defaultdict(float)
        for window in opencost.days:
            by_day[window.start.date()] += window.total()
        cluster = dict(by_day)
    known = litellm is not None and (
        bool(litellm.daily_spend) or not any(u.spend for u in litellm.usage)
    )
    return Recorded(
        llm=dict(llm) if known else None,
        cluster=cluster,
        cluster_month=month,
        unknown_provider=unknown,
    )
