"""The statement's operating columns and labelling backlog, in the page's number formats."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from exporter.finance.report import labels
from exporter.finance.report.backlog import BacklogLine, BacklogTable
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.teams import USAGE_COLUMNS, Measure, PrintedUsage, TeamUsage
from exporter.finance.report.teams import printed_usage as usage_rows

__all__ = ["USAGE_HEAD", "backlog_lines", "printed_usage", "usage_cards"]

USAGE_HEAD = [c.label for c in USAGE_COLUMNS]


def printed_usage(usage: Sequence[TeamUsage | None], numbers: Numbers) -> PrintedUsage:
    """The teams' operating figures in the page's locale; each column foots to its total."""

    def write(measure: Measure, value: float) -> str:
        if measure is Measure.PERCENT:
            return numbers.one_decimal(value)
        if measure is Measure.COUNT:
            return numbers.count(int(value))
        return numbers.amount(value)

    return usage_rows(usage, write)


def backlog_lines(
    table: BacklogTable, rows: tuple[BacklogLine, ...], numbers: Numbers, fallback: bool
) -> list[list[str]]:
    """One list of the backlog as a table: a row per workload, then its total."""
    head = ["Namespace", "Workload", "Team" if fallback else "Keys that would place it", "Cost"]
    lines = [head]
    for r in rows:
        third = f"{labels.team(r.owner)} ({' '.join(r.keys)})" if fallback else " ".join(r.keys)
        lines.append([r.namespace, r.workload, third, numbers.amount(r.cost)])
    total = table.fallback_total if fallback else table.unallocated_total
    lines.append(["Total", "", "", numbers.amount(total)])
    return lines


def usage_cards(
    usage: TeamUsage | None, numbers: Numbers, card: Callable[[str, str, str], str]
) -> list[str]:
    """A team page's headline cards for its GPU-hours, occupancy and tokens, where known."""
    if usage is None:
        return []
    cards = []
    if usage.gpu_hours is not None:
        idle = usage.idle_gpu_hours
        detail = "used this month" if idle is None else f"{numbers.amount(idle)} of them idle"
        cards.append(card("GPU-hours", numbers.amount(usage.gpu_hours), detail))
    occupancy = usage.occupancy_percent
    if occupancy is not None and usage.guaranteed_gpus is not None:
        detail = f"of {numbers.amount(usage.guaranteed_gpus)} guaranteed GPUs"
        cards.append(card("Occupancy", f"{numbers.one_decimal(occupancy)}\u00a0%", detail))
    if usage.tokens is not None:
        cards.append(card("Tokens", numbers.count(usage.tokens), "LLM prompt and completion"))
    return cards
