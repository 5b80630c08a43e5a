"""The month by a dimension beyond the team: `report --by NAME`, and the statement's tables.

A dimension's report is built like the team report, from the join's split of the same month
(`Chargeback.dimensions`), so it foots to the cent and to the same total.
"""

from __future__ import annotations

from exporter.finance.focus.tags import Tagging, tagging
from exporter.finance.report.figures import Report, build_report
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.result import Chargeback

__all__ = ["dimension_report", "dimension_reports", "focus_tagging"]


def dimension_report(chargeback: Chargeback, name: str, team_report: Report) -> Report:
    """The month by the values of dimension `name`, with the team report's header figures.

    Raises ValueError naming the configured dimensions when `name` is not one of them.
    """
    for split in chargeback.dimensions:
        if split.name == name:
            ledger = Ledger(dict(split.month.costs))
            return build_report(
                ledger,
                team_report.currency,
                team_report.month,
                {},
                team_report.models,
                idle=chargeback.month_idle,
                closed=team_report.closed,
                quota_basis=team_report.quota_basis,
                by=name,
            )
    known = ", ".join(d.name for d in chargeback.dimensions) or "none is configured"
    raise ValueError(f"no dimension {name!r}: the dimensions are {known}")


def dimension_reports(chargeback: Chargeback, team_report: Report) -> tuple[Report, ...]:
    """A report per configured dimension, in config order."""
    return tuple(dimension_report(chargeback, d.name, team_report) for d in chargeback.dimensions)


def focus_tagging(chargeback: Chargeback, team_report: Report) -> Tagging:
    """What the FOCUS rows are tagged with: every dimension's values, aiming at each
    dimension's report (`report --by NAME`) to the cent."""
    return tagging(chargeback.joint, dimension_reports(chargeback, team_report))
