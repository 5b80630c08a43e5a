"""The report's `backlog` table: the labelling backlog in printed figures that add up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from exporter.finance.report.footing import cents, largest_remainder, round_cents
from exporter.finance.report.writing import CSV, Cells
from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.costs.backlog import FALLBACK, UNPLACED, Backlog, BacklogRow

__all__ = [
    "BACKLOG_COLUMNS",
    "BACKLOG_NAMES",
    "BacklogLine",
    "BacklogTable",
    "backlog_json",
    "backlog_lines",
    "backlog_of_team",
    "printed_backlog",
]

BACKLOG_COLUMNS = ["kind", "namespace", "workload", "team", "keys", "cost"]
# The cells that carry names (indexes): every one but the cost.
BACKLOG_NAMES = frozenset(range(BACKLOG_COLUMNS.index("cost")))
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class BacklogLine:
    """One row of a list: its workload, where the cost went, the keys, and the printed cost."""

    namespace: str
    workload: str
    owner: str
    keys: tuple[str, ...]
    cost: Decimal


@dataclass(frozen=True)
class BacklogTable:
    """Both lists, largest first; each list's rows add up to its printed total."""

    keys: tuple[str, ...]  # the keys that would place an unallocated workload
    unallocated: tuple[BacklogLine, ...] = ()
    fallback: tuple[BacklogLine, ...] = ()

    @property
    def unallocated_total(self) -> Decimal:
        """The printed total of the unallocated list."""
        return sum((r.cost for r in self.unallocated), Decimal(0))

    @property
    def fallback_total(self) -> Decimal:
        """The printed total of the fallback list."""
        return sum((r.cost for r in self.fallback), Decimal(0))

    def lists(self) -> tuple[tuple[str, tuple[BacklogLine, ...]], ...]:
        """(kind, rows) for each list, unallocated first."""
        return ((UNPLACED, self.unallocated), (FALLBACK, self.fallback))


def printed_backlog(backlog: Backlog) -> BacklogTable:
    """Round each list by largest remainder against its exact total rounded once."""
    return BacklogTable(backlog.keys, _printed(backlog.unallocated), _printed(backlog.fallback))


def _printed(rows: Sequence[BacklogRow]) -> tuple[BacklogLine, ...]:
    exact = [cents(r.cost) for r in rows]
    printed = largest_remainder(exact, round_cents(sum(exact, Decimal(0))))
    return tuple(
        BacklogLine(r.namespace, r.workload, r.owner, r.keys, _money(c))
        for r, c in zip(rows, printed, strict=True)
    )


def _money(value: int) -> Decimal:
    return (Decimal(value) / 100).quantize(_CENT)


def backlog_of_team(table: BacklogTable, team: str) -> BacklogTable:
    """One team's part: the unallocated list only for `__unallocated__`, its fallback rows."""
    unallocated = table.unallocated if team == UNALLOCATED else ()
    fallback = tuple(r for r in table.fallback if r.owner == team)
    return replace(table, unallocated=unallocated, fallback=fallback)


def backlog_lines(table: BacklogTable, cells: Cells = CSV) -> list[list[str]]:
    """Header, then each list's rows and its total row."""
    lines = [[cells.head(c) for c in BACKLOG_COLUMNS]]
    for kind, rows in table.lists():
        word = cells.word(kind)
        for r in rows:
            keys = " ".join(r.keys)
            owner = cells.name("team", r.owner)
            lines.append([word, r.namespace, r.workload, owner, keys, cells.money(r.cost)])
        total = sum((r.cost for r in rows), Decimal(0))
        lines.append([word, cells.total, "", "", "", cells.money(total)])
    return lines


def backlog_json(table: BacklogTable) -> dict[str, Any]:
    """The backlog as the JSON report carries it."""

    def rows(lines: tuple[BacklogLine, ...]) -> list[dict[str, Any]]:
        return [
            {
                "namespace": r.namespace,
                "workload": r.workload,
                "team": r.owner,
                "keys": list(r.keys),
                "cost": float(r.cost),
            }
            for r in lines
        ]

    return {
        "keys": list(table.keys),
        "unallocated": rows(table.unallocated),
        "unallocated_total": float(table.unallocated_total),
        "fallback": rows(table.fallback),
        "fallback_total": float(table.fallback_total),
    }
