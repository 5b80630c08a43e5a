"""Kueue quota per team: each queue's quota, who lent what was borrowed, and GPU quota money (pure).

The lending rule (the exporter's policy; Kueue reports only what each queue borrows): within a
cohort, per flavor and resource, the total borrowed is apportioned to the queues that have
unused lendable quota, `max(0, min(nominal - usage, lending_limit))`, in proportion to it. No
queue lends more than it has unused, so when queues borrow quota held by Cohort objects (which
the exporter does not read) or by another branch of a cohort tree, lent sums to less than
borrowed; `lending_mismatches` reports that instead of inventing a lender.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from exporter.ledger.attribution import IDLE, Attributor
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.policies import IdleRule
from exporter.ledger.costs.window import Window
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord

__all__ = [
    "GPU_RESOURCES",
    "FlavorOf",
    "LendingMismatch",
    "QueueKey",
    "QueueQuota",
    "TeamGpuQuota",
    "apply_flavor_quota",
    "apply_gpu_quota",
    "apply_quota",
    "default_gpu_budgets",
    "gpu_quota_by_flavor",
    "gpu_quota_by_team",
    "lend",
    "lendable",
    "lending_mismatches",
    "month_borrowing",
    "queue_quotas",
    "quota_budgets",
]

QueueKey = tuple[str, str, str]  # (cluster_queue, flavor, resource)
GPU_RESOURCES: frozenset[str] = frozenset({"nvidia.com/gpu"})
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LendingMismatch:
    """A cohort, flavor and resource where what was lent differs from what was borrowed."""

    cohort: str
    flavor: str
    resource: str
    borrowed: float
    lent: float


@dataclass(frozen=True)
class TeamGpuQuota:
    """GPU quota per team (summed over its queues and GPU flavors), ready for the money rules."""

    nominal: Mapping[str, float]
    usage: Mapping[str, float]
    borrowed: Mapping[str, float]
    lent: Mapping[str, float]
    lending_limit: Mapping[str, float]


def lendable(record: QuotaRecord) -> float:
    """Unused quota a queue may lend: `max(0, min(nominal - usage, lending_limit))`."""
    return max(0.0, min(record.nominal - record.usage, record.lending_limit))


def lend(queues: Iterable[QuotaRecord]) -> dict[QueueKey, float]:
    """Apportion each cohort's borrowed quota to its queues with lendable quota (see module)."""
    groups: dict[tuple[str, str, str], list[QuotaRecord]] = defaultdict(list)
    for record in queues:
        if record.cohort:  # a queue without a cohort can neither borrow nor lend
            groups[(record.cohort, record.flavor, record.resource)].append(record)
    out: dict[QueueKey, float] = {}
    for records in groups.values():
        borrowed = math.fsum(r.borrowed for r in records)
        pool = math.fsum(lendable(r) for r in records)
        fraction = min(1.0, borrowed / pool) if pool > 0 else 0.0
        for r in records:
            out[(r.cluster_queue, r.flavor, r.resource)] = lendable(r) * fraction
    return out


def lending_mismatches(
    queues: Iterable[QuotaRecord], lent: Mapping[QueueKey, float]
) -> list[LendingMismatch]:
    """Cohorts, flavors and resources where lent != borrowed (1e-9 relative), sorted."""
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in queues:
        if r.cohort:
            acc = sums[(r.cohort, r.flavor, r.resource)]
            acc[0] += r.borrowed
            acc[1] += lent.get((r.cluster_queue, r.flavor, r.resource), 0.0)
    return [
        LendingMismatch(*key, borrowed, given)
        for key, (borrowed, given) in sorted(sums.items())
        if not math.isclose(borrowed, given, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)
    ]


@dataclass(frozen=True)
class QueueQuota:
    """One ClusterQueue's quota of one flavor and resource, with its team and what it lent."""

    team: str
    cluster_queue: str
    cohort: str
    flavor: str
    resource: str
    nominal: float
    usage: float
    borrowed: float
    lent: float
    borrowing_limit: float
    lending_limit: float


def queue_quotas(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
) -> tuple[QueueQuota, ...]:
    """Every queue's quota as Kueue reports it; `lent` defaults to `lend(snapshot.queues)`."""
    given = lend(snapshot.queues) if lent is None else lent
    return tuple(
        QueueQuota(
            attributor.team_for_queue(r.cluster_queue),
            r.cluster_queue,
            r.cohort,
            r.flavor,
            r.resource,
            r.nominal,
            r.usage,
            r.borrowed,
            given.get((r.cluster_queue, r.flavor, r.resource), 0.0),
            r.borrowing_limit,
            r.lending_limit,
        )
        for r in snapshot.queues
    )


def gpu_quota_by_team(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
    *,
    resources: Collection[str] = GPU_RESOURCES,
    flavors: Collection[str] | None = None,
) -> TeamGpuQuota:
    """GPU nominal, usage, borrowed, lent and lending limit per team, over its queues."""
    given = lend(snapshot.queues) if lent is None else lent
    sums: dict[str, dict[str, float]] = {
        k: defaultdict(float) for k in ("nominal", "usage", "borrowed", "lent", "lending_limit")
    }
    for r in snapshot.queues:
        if r.resource not in resources or (flavors is not None and r.flavor not in flavors):
            continue
        team = attributor.team_for_queue(r.cluster_queue)
        sums["nominal"][team] += r.nominal
        sums["usage"][team] += r.usage
        sums["borrowed"][team] += r.borrowed
        sums["lent"][team] += given.get((r.cluster_queue, r.flavor, r.resource), 0.0)
        sums["lending_limit"][team] += min(r.lending_limit, r.nominal)
    return TeamGpuQuota(**{k: dict(v) for k, v in sums.items()})


def apply_gpu_quota(
    ledger: Ledger,
    nominal: Mapping[str, float],
    borrowed: Mapping[str, float],
    lent: Mapping[str, float],
    price_per_gpu_hour: float,
    hours: float,
    rule: IdleRule,
) -> Ledger:
    """Charge GPU quota of one flavor (team -> GPUs) at one price; see `apply_flavor_quota`."""
    one = {"": price_per_gpu_hour}
    return apply_flavor_quota(ledger, {"": nominal}, {"": borrowed}, {"": lent}, one, hours, rule)


def apply_flavor_quota(
    ledger: Ledger,
    nominal: Mapping[str, Mapping[str, float]],
    borrowed: Mapping[str, Mapping[str, float]],
    lent: Mapping[str, Mapping[str, float]],
    prices: Mapping[str, float],
    hours: float,
    rule: IdleRule,
) -> Ledger:
    """Charge GPU quota (flavor -> team -> GPUs) onto a ledger at each flavor's price.

    Returns a new ledger with the same total. Flavors without a price are left out.
    A rule that charges GPU quota (`reservation`): a team with quota pays `nominal`,
    `+borrowed` and `-lent` (each x its flavor's price x hours, summed over flavors) as
    components gpu, borrowed and lent, replacing its usage-based gpu cost; the difference
    comes from (or goes back to) `__idle__`'s gpu, so the total is unchanged. If nominal quota
    exceeds the capacity left idle, `__idle__`'s gpu goes negative, showing it. Any other rule
    (`separate`, `proportional`): the borrowed part of a team's gpu cost, at most all of it,
    moves from gpu to borrowed; nothing is lent.
    """
    out = Ledger(dict(ledger.costs), dict(ledger.fallback))
    reserved, extra, credit = (_money(m, prices, hours) for m in (nominal, borrowed, lent))
    if rule.charges_gpu_quota:
        _charge_quota(out, reserved, extra, credit)
    else:
        _move_borrowed(out, extra)
    _unheld_is_gpu(out, {team for flavor in nominal.values() for team in flavor})
    return out


def _unheld_is_gpu(out: Ledger, holders: Collection[str]) -> None:
    """A team with no ClusterQueue borrows nothing: its GPU-hours count against the quota
    they ran on (lenders are credited), but it pays for them as GPU cost, not `borrowed`."""
    for team, component in sorted(out.costs):
        if component == Component.BORROWED and team not in holders:
            moved = out.costs.pop((team, component))
            out.add(team, Component.GPU, moved)


def _charge_quota(
    out: Ledger,
    reserved: Mapping[str, float],
    extra: Mapping[str, float],
    credit: Mapping[str, float],
) -> None:
    """Each team pays its reservation, plus what it borrowed, minus what it lent."""
    scale = abs(out.costs.get((IDLE, Component.GPU), 0.0))
    for team in sorted(set(reserved) | set(extra) | set(credit)):
        scale += abs(out.costs.get((team, Component.GPU), 0.0)) + reserved.get(team, 0.0)
        before = out.costs.get((team, Component.GPU), 0.0)
        pays, more, back = reserved.get(team, 0.0), extra.get(team, 0.0), -credit.get(team, 0.0)
        _set(out, team, Component.GPU, pays)
        out.add(team, Component.BORROWED, more)
        out.add(team, Component.LENT, back)
        # Conservation by construction: whatever the team now pays beyond its usage
        # is capacity that was sitting on __idle__.
        idle = out.costs.get((IDLE, Component.GPU), 0.0)
        _set(out, IDLE, Component.GPU, idle + before - pays - more - back)
    # Quota reserving every GPU-hour leaves __idle__ at 0 give or take a few ulps: -0.00.
    left = out.costs.get((IDLE, Component.GPU), 0.0)
    if left and abs(left) <= 1e-12 * scale:
        _set(out, IDLE, Component.GPU, 0.0)


def _move_borrowed(out: Ledger, extra: Mapping[str, float]) -> None:
    """Only the borrowed part of a team's GPU usage moves, from gpu to borrowed."""
    for team in sorted(extra):
        gpu = out.costs.get((team, Component.GPU), 0.0)
        moved = max(0.0, min(extra[team], gpu))
        _set(out, team, Component.GPU, gpu - moved)
        out.add(team, Component.BORROWED, moved)


def _money(
    gpus: Mapping[str, Mapping[str, float]], prices: Mapping[str, float], hours: float
) -> dict[str, float]:
    """Team -> GPUs x price x hours, summed over the priced flavors in name order."""
    out: dict[str, float] = {}
    for flavor in sorted(gpus):
        if flavor not in prices:
            continue
        rate = prices[flavor] * hours
        for team, amount in gpus[flavor].items():
            out[team] = out.get(team, 0.0) + amount * rate
    return out


def _set(ledger: Ledger, team: str, component: str, amount: float) -> None:
    ledger.costs.pop((team, component), None)
    ledger.add(team, component, amount)


def month_borrowing(
    nominal: Mapping[str, float],
    used_gpu_hours: Mapping[str, float],
    lending_limits: Mapping[str, float],
    hours: float,
) -> tuple[dict[str, float], dict[str, float]]:
    """Month-to-date (borrowed, lent) GPU-hours per team, from quota and measured use.

    borrowed_t = max(0, used_t - nominal_t x hours). Lendable_t = max(0, min(nominal_t x hours
    - used_t, lending_limit_t x hours)) (an absent lending limit is unlimited). The total
    borrowed is apportioned to lenders in proportion to lendable, never beyond it: lent sums to
    borrowed whenever enough is lendable, else every lender lends all it could. Netting over
    the month is an approximation: a team that borrowed in one week and lent in another shows
    only the balance.
    """
    teams = sorted(set(nominal) | set(used_gpu_hours))
    borrowed: dict[str, float] = {}
    spare: dict[str, float] = {}
    for team in teams:
        held = nominal.get(team, 0.0) * hours
        used = used_gpu_hours.get(team, 0.0)
        borrowed[team] = max(0.0, used - held)
        cap = lending_limits.get(team, math.inf) * hours
        spare[team] = max(0.0, min(held - used, cap))
    need = math.fsum(borrowed.values())
    pool = math.fsum(spare.values())
    fraction = min(1.0, need / pool) if pool > 0 else 0.0
    return borrowed, {team: spare[team] * fraction for team in teams}


def default_gpu_budgets(
    nominal_by_team: Mapping[str, float], price: float, hours_in_month: float
) -> dict[str, float]:
    """A team's default monthly GPU budget: its nominal GPU quota x price x hours of the month."""
    return {team: gpus * price * hours_in_month for team, gpus in sorted(nominal_by_team.items())}


def quota_budgets(
    quota: Mapping[str, TeamGpuQuota],
    configured: Collection[str],
    prices: Mapping[str, float],
    hours_in_month: float,
) -> dict[tuple[str, str], float]:
    """GPU budgets for teams that configure none: nominal quota x its flavor's price x hours."""
    monthly: dict[str, float] = {}
    for flavor in sorted(quota):
        if flavor in prices:
            for team, gpus in quota[flavor].nominal.items():
                monthly[team] = monthly.get(team, 0.0) + gpus * prices[flavor]
    return {
        (team, Component.GPU): amount * hours_in_month
        for team, amount in sorted(monthly.items())
        if team not in configured and not team.startswith("__")
    }


def gpu_quota_by_flavor(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
    *,
    resources: Collection[str] = GPU_RESOURCES,
) -> dict[str, TeamGpuQuota]:
    """`gpu_quota_by_team` for each flavor that has GPU quota: flavor -> per-team quota."""
    given = lend(snapshot.queues) if lent is None else lent
    flavors = sorted({r.flavor for r in snapshot.queues if r.resource in resources})
    return {
        f: gpu_quota_by_team(snapshot, attributor, given, resources=resources, flavors={f})
        for f in flavors
    }


FlavorOf = Callable[[str, str], str | None]  # (node, team) -> the GPU flavor its usage is in


def apply_quota(
    window: Window,
    quota: Mapping[str, TeamGpuQuota],
    prices: Mapping[str, float],
    rule: IdleRule,
    flavor_of: FlavorOf | None = None,
) -> Window:
    """Charge GPU quota (a rule that does) or split borrowed GPU cost out (others), per window.

    `quota` and `prices` are per flavor. A live window uses Kueue's live status: nominal,
    borrowed, and lent as apportioned now. Kueue keeps no history, so any other window assumes
    today's nominal quota held throughout, and takes borrowing per flavor from the GPU-hours
    each team used beyond its nominal quota there; `flavor_of` says which flavor a node's
    GPU-hours count against (by default the first flavor, right for a single-flavor cluster).
    """
    hours = window.unit_hours
    nominal = {f: q.nominal for f, q in quota.items()}
    borrowed = {f: q.borrowed for f, q in quota.items()}
    lent = {f: q.lent for f, q in quota.items()}
    if not window.live and quota:
        used = _used_by_flavor(window, sorted(quota), flavor_of)
        # month_borrowing answers in GPU-hours; the money rules want GPUs over `hours`.
        per_hour = 1.0 / hours if hours > 0 else 0.0
        for f, q in quota.items():
            b, given = month_borrowing(q.nominal, used.get(f, {}), q.lending_limit, hours)
            borrowed[f] = {t: h * per_hour for t, h in b.items()}
            lent[f] = {t: h * per_hour for t, h in given.items()}
    ledger = apply_flavor_quota(window.ledger, nominal, borrowed, lent, prices, hours, rule)
    return window.with_ledger(ledger)


def _used_by_flavor(
    window: Window, flavors: Sequence[str], flavor_of: FlavorOf | None
) -> dict[str, dict[str, float]]:
    """GPU-hours per flavor and team, each allocation on the flavor its node belongs to."""
    used: dict[str, dict[str, float]] = defaultdict(dict)
    for line, a in zip(window.lines, window.allocations.allocations, strict=True):
        if not a.gpu_hours:
            continue
        team = line.placement.team
        found = flavor_of(a.node, team) if flavor_of is not None else None
        flavor = found if found is not None and found in flavors else flavors[0]
        used[flavor][team] = used[flavor].get(team, 0.0) + a.gpu_hours
    return dict(used)
