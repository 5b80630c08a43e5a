"""The report's figures beyond money: the team table's operating columns, the labelling backlog,
and one team's own report (`report --team NAME`)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from exporter.config.schema import Config
from exporter.finance.report.advice import advice_of_team
from exporter.finance.report.backlog import backlog_of_team, printed_backlog
from exporter.finance.report.figures import Report, model_rows
from exporter.finance.report.queues import queue_table, queues_of_team
from exporter.finance.report.teams import team_usage
from exporter.finance.report.units import for_team as units_for_team
from exporter.ledger.costs.components import Component
from exporter.ledger.result import Chargeback

__all__ = ["model_kinds", "team_report", "with_operations"]


def model_kinds(config: Config) -> dict[str, str]:
    """Each declared model's kind, as the model table prints it."""
    return {m.model: "external" if m.external else "self_hosted" for m in config.llm_models}


def with_operations(report: Report, chargeback: Chargeback) -> Report:
    """The report with each team's operating figures, the month's backlog and the completion
    weights its serving cost was moved by."""
    backlog = printed_backlog(chargeback.backlog) if chargeback.backlog is not None else None
    usage = team_usage(chargeback)
    queues = None
    if chargeback.queues is not None:
        queues = queue_table(chargeback.queues, chargeback.counted_as)
    return replace(report, usage=usage, backlog=backlog, weights=chargeback.weights, queues=queues)


def team_report(report: Report, chargeback: Chargeback, config: Config, team: str) -> Report:
    """One team's own report: its row, its models, its part of the backlog.

    Raises ValueError naming the report's teams when `team` is not one of them.
    """
    rows = tuple(r for r in report.rows if r.team == team)
    if not rows:
        known = ", ".join(r.team for r in report.rows)
        raise ValueError(f"no team {team!r} in {report.month}: the teams are {known}")
    (row,) = rows
    usage = {k: v for k, v in chargeback.llm_usage.items() if k[0] == team}
    return replace(
        report,
        rows=rows,
        columns=dict(row.costs),
        total=row.total,
        # The team's own share of idle, not the cluster's.
        idle=row.costs.get(Component.IDLE_SHARE, Decimal(0)),
        idle_shared=row.costs.get(Component.IDLE_SHARE, Decimal(0)),
        models=model_rows(usage, chargeback.llm_pricing, model_kinds(config)),
        usage={team: report.usage[team]} if team in report.usage else {},
        backlog=backlog_of_team(report.backlog, team) if report.backlog is not None else None,
        queues=queues_of_team(report.queues, team) if report.queues is not None else None,
        team=team,
        units=None if report.units is None else units_for_team(report.units, team),
        advice=None if report.advice is None else advice_of_team(report.advice, team),
    )
