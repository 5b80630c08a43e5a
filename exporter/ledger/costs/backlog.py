"""The labelling backlog: cost nobody owns, and cost placed only by a fallback key (pure).

"Labelling is a Pareto problem": the month's unallocated cost is ranked by money per namespace
and workload, each row naming the keys that would have placed it, so the first rows are what to
label first. Cost a fallback key placed is ranked the same way, as its own list: it has an owner,
but only by a key the config calls a fallback.

The figures are the allocations' own cost (OpenCost's components), before any idle policy,
quota or LLM step moves money: what labelling the workload would have moved. A list keeps its
`limit` largest rows and folds the rest into one `__other__` row, so it always adds up to the
cost it ranks and the metric family stays bounded at `2 x (limit + 1)` series.

Nothing here is team-specific: `backlog` takes entries already placed by any allocation key
(the team, or a later dimension) and the keys that would have placed them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.ledger.attribution import OTHER, UNALLOCATED, Placement
from exporter.ledger.costs.ledger import CostLine
from exporter.sources.opencost.snapshot import AllocationSet

__all__ = [
    "BACKLOG_LIMIT",
    "FALLBACK",
    "UNPLACED",
    "Backlog",
    "BacklogRow",
    "Entry",
    "backlog",
    "team_backlog",
    "team_keys",
    "workload_of",
]

# Rows each list keeps before folding the rest into `__other__`: the top of a Pareto list is
# what gets fixed first, and 2 x 21 series stay cheap on any cluster.
BACKLOG_LIMIT = 20
UNPLACED = "unallocated"
FALLBACK = "fallback"


@dataclass(frozen=True)
class Entry:
    """One allocation's cost and where an allocation key placed it."""

    namespace: str
    workload: str
    placement: Placement
    cost: float


@dataclass(frozen=True)
class BacklogRow:
    """One namespace and workload's cost in a list, largest first.

    `owner` is the value the cost went to (`__unallocated__`, or the team a fallback key named);
    `keys` the keys that would have placed it (unallocated) or the fallback key that did.
    """

    namespace: str
    workload: str
    owner: str
    keys: tuple[str, ...]
    cost: float


@dataclass(frozen=True)
class Backlog:
    """Both lists, each ranked by cost and folded past its limit, with their exact totals."""

    unallocated: tuple[BacklogRow, ...] = ()
    fallback: tuple[BacklogRow, ...] = ()
    keys: tuple[str, ...] = ()  # the keys that would place an unallocated workload

    @property
    def unallocated_total(self) -> float:
        """The unallocated cost the list ranks."""
        return sum(r.cost for r in self.unallocated)

    @property
    def fallback_total(self) -> float:
        """The fallback-placed cost the list ranks."""
        return sum(r.cost for r in self.fallback)


def workload_of(name: str, namespace: str) -> str:
    """The controller part of OpenCost's `node/namespace/controller` allocation name."""
    parts = name.split("/", 2)
    if len(parts) == 3 and parts[1] == namespace:
        return parts[2]
    return name


def team_keys(config: Config) -> tuple[str, ...]:
    """The keys that would place a workload on a team, as a person would set them, in the
    attribution's precedence order (fallback keys are not among them: they hide the gap)."""
    a = config.attribution
    return (
        *(f"label:{k}" for k in a.team_label_keys),
        *(f"annotation:{k}" for k in a.team_annotation_keys),
        *(f"namespace_label:{k}" for k in a.namespace_label_keys),
        *(f"namespace_annotation:{k}" for k in a.namespace_annotation_keys),
    )


def team_entries(lines: Sequence[CostLine], allocations: AllocationSet) -> Iterator[Entry]:
    """The allocations of a window that belong in a backlog, with their placement and cost.

    Most of a cluster's allocations are placed by a label and are skipped before any work: a
    join runs this over every allocation of the month at every refresh.
    """
    allocs = allocations.allocations
    if len(allocs) != len(lines):
        raise ValueError("a window's cost lines and allocations differ in number")
    wanted = [
        i
        for i, line in enumerate(lines)
        if line.placement.team == UNALLOCATED or line.placement.via == "fallback"
    ]
    for i in wanted:
        a, line = allocs[i], lines[i]
        yield Entry(a.namespace, workload_of(a.name, a.namespace), line.placement, _cost(line))


def _cost(line: CostLine) -> float:
    return sum(line.costs.values())


def team_backlog(config: Config, lines: Sequence[CostLine], allocations: AllocationSet) -> Backlog:
    """The team attribution's backlog over one window's allocations."""
    return backlog(team_entries(lines, allocations), team_keys(config))


def backlog(entries: Iterable[Entry], keys: tuple[str, ...], limit: int = BACKLOG_LIMIT) -> Backlog:
    """Rank unplaced and fallback-placed cost by namespace and workload; fold past `limit`."""
    unplaced: dict[tuple[str, str, str, str], float] = defaultdict(float)
    fallback: dict[tuple[str, str, str, str], float] = defaultdict(float)
    for e in entries:
        if e.placement.team == UNALLOCATED:
            unplaced[(e.namespace, e.workload, UNALLOCATED, "")] += e.cost
        elif e.placement.is_fallback:
            fallback[(e.namespace, e.workload, e.placement.team, e.placement.key)] += e.cost
    return Backlog(_ranked(unplaced, keys, limit), _ranked(fallback, (), limit), keys)


def _ranked(
    sums: dict[tuple[str, str, str, str], float], keys: tuple[str, ...], limit: int
) -> tuple[BacklogRow, ...]:
    # Sorted by money, then by name, so the order never depends on upstream JSON order.
    ranked = sorted((k for k, v in sums.items() if v), key=lambda k: (-sums[k], k))
    rows = [
        BacklogRow(ns, wl, owner, (key,) if key else keys, sums[(ns, wl, owner, key)])
        for ns, wl, owner, key in ranked[:limit]
    ]
    rest = ranked[limit:]
    if rest:
        folded = sum(sorted(sums[k] for k in rest))
        rows.append(BacklogRow(OTHER, OTHER, OTHER, (), folded))
    return tuple(rows)
