"""Join DCGM and Kueue with the cost ledgers: GPU states, quota, borrowing money, budgets (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from exporter.attribution import Attributor
from exporter.chargeback import Ledger
from exporter.config import Config
from exporter.gpus import gpu_samples, model_price
from exporter.quota import (
    apply_gpu_quota,
    default_gpu_budgets,
    gpu_quota_by_team,
    lend,
    month_borrowing,
    quota_samples,
)
from exporter.samples import Sample
from exporter.sources.dcgm import DcgmSnapshot
from exporter.sources.kueue import KueueSnapshot
from exporter.sources.opencost import AllocationSet

__all__ = ["apply_quota", "dcgm_samples", "gpu_hours_by_team", "kueue_samples", "quota_budgets"]


def dcgm_samples(
    config: Config, attributor: Attributor, dcgm: DcgmSnapshot, gpu_price: float | None
) -> list[Sample]:
    """GPU states, utilisation and waste; a GPU model's price comes from config, else OpenCost."""
    assert config.sources.dcgm is not None
    price = model_price(config.gpu_prices, default=gpu_price)
    return gpu_samples(dcgm, attributor, config.sources.dcgm.idle_threshold, price)


def kueue_samples(attributor: Attributor, kueue: KueueSnapshot) -> list[Sample]:
    """The quota families, with lending apportioned by the documented rule."""
    return quota_samples(kueue, attributor, lend(kueue.queues))


def gpu_hours_by_team(window: AllocationSet, attributor: Attributor) -> dict[str, float]:
    """GPU-hours each team used in a window, placed by the same rules as its cost."""
    hours: dict[str, float] = defaultdict(float)
    for a in window.allocations:
        if a.gpu_hours:
            hours[attributor.place(a.namespace, a.labels, a.namespace_labels).team] += a.gpu_hours
    return dict(hours)


def apply_quota(
    config: Config,
    attributor: Attributor,
    kueue: KueueSnapshot,
    ledgers: tuple[Ledger, Ledger],
    month_gpu_hours: Mapping[str, float],
    price: float,
    month_hours: float,
) -> tuple[Ledger, Ledger]:
    """Charge GPU quota (reservation) or split borrowed GPU cost out (other policies).

    The hourly ledger uses Kueue's live status: nominal, borrowed, and lent as apportioned now.
    Kueue keeps no history, so the month ledger assumes today's nominal quota held all month,
    and takes borrowing from the GPU-hours each team used beyond its nominal quota.
    """
    rate, month = ledgers
    quota = gpu_quota_by_team(kueue, attributor, lend(kueue.queues))
    policy = config.idle_policy
    rate = apply_gpu_quota(rate, quota.nominal, quota.borrowed, quota.lent, price, 1.0, policy)
    borrowed_hours, lent_hours = month_borrowing(
        quota.nominal, month_gpu_hours, quota.lending_limit, month_hours
    )
    # month_borrowing answers in GPU-hours; apply_gpu_quota wants GPUs over `hours`.
    per_hour = 1.0 / month_hours if month_hours > 0 else 0.0
    borrowed = {t: h * per_hour for t, h in borrowed_hours.items()}
    lent = {t: h * per_hour for t, h in lent_hours.items()}
    month = apply_gpu_quota(month, quota.nominal, borrowed, lent, price, month_hours, policy)
    return rate, month


def quota_budgets(
    config: Config,
    attributor: Attributor,
    kueue: KueueSnapshot,
    price: float,
    hours_in_month: float,
) -> dict[tuple[str, str], float]:
    """GPU budgets for teams that configure none: nominal quota x price x hours of the month."""
    quota = gpu_quota_by_team(kueue, attributor)
    configured = {t.name for t in config.teams if t.budget.gpu is not None}
    defaults = default_gpu_budgets(quota.nominal, price, hours_in_month)
    return {
        (team, "gpu"): amount
        for team, amount in defaults.items()
        if team not in configured and not team.startswith("__")
    }
