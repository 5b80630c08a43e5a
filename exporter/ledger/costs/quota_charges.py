"""GPU quota as money: a rule that charges quota makes teams pay it, others split borrowed cost.

Every function returns a ledger (or window) with the same total as the one it was given.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence

from exporter.ledger.attribution import IDLE
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.lending import month_borrowing
from exporter.ledger.costs.policies import IdleRule
from exporter.ledger.costs.quota import TeamGpuQuota
from exporter.ledger.costs.window import Window

__all__ = ["FlavorOf", "apply_flavor_quota", "apply_gpu_quota", "apply_quota"]

FlavorOf = Callable[[str, str], str | None]  # (node, team) -> the GPU flavor its usage is in


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
