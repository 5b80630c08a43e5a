"""The statement's figures beyond the report's tables: budgets with forecasts, idle, borrowing, LLM.

Every figure is derived from the report's printed (footed) figures, or footed the same way, so
the HTML statement shows the same numbers as `report --format table`, to the cent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from exporter.config.schema import Config
from exporter.finance.report.advice import advice_of_team
from exporter.finance.report.backlog import backlog_of_team
from exporter.finance.report.dimensions import dimension_reports
from exporter.finance.report.figures import Report, build_report, model_rows
from exporter.finance.report.footing import cents, foot, round_cents
from exporter.finance.report.operations import with_operations
from exporter.finance.report.queues import queues_of_team
from exporter.finance.report.reconciliation import reconciliation_table
from exporter.finance.report.what_if import WhatIfTable
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.costs.components import Component
from exporter.ledger.result import Chargeback

__all__ = [
    "ABSORBED",
    "BudgetLine",
    "Statement",
    "build_statement",
    "for_team",
    "only_dimension",
    "statement_report",
]

log = logging.getLogger(__name__)

LLM_EXTERNAL = Component.LLM_EXTERNAL
# Where idle went besides teams: what reservations absorbed (IDLE is what stayed idle).
ABSORBED = "__absorbed__"
KINDS = ("gpu", "llm")
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class BudgetLine:
    """One team's budget of one kind against its month to date and its end-of-month forecast."""

    team: str
    kind: str  # gpu | llm
    budget: Decimal
    actual: Decimal
    forecast: Decimal


@dataclass(frozen=True)
class Statement:
    """The report plus what the statement's charts show, all in printed figures."""

    report: Report
    at: datetime  # when the figures were joined, in the configured zone
    zone: str  # the configured time zone's name
    budgets: tuple[BudgetLine, ...]
    idle: tuple[tuple[str, Decimal], ...]  # where the month's idle went; adds to report.idle
    borrowing: tuple[tuple[str, Decimal, Decimal], ...]  # (team, borrowed, lent)
    llm_teams: tuple[str, ...]
    llm_spend: Mapping[str, tuple[Decimal, ...]]  # model -> spend per team of `llm_teams`
    cluster: str = ""
    team: str | None = None  # the one team a team's statement is about
    dimensions: tuple[Report, ...] = ()  # the month by each configured dimension
    what_if: WhatIfTable | None = None  # the month joined again under other settings


def _money(value: int | Decimal) -> Decimal:
    return (Decimal(value) / 100).quantize(_CENT)


def _order(team: str) -> tuple[int, str]:
    # The report's row order: teams by name, then the reserved rows.
    return {OTHER: 1, IDLE: 2, UNALLOCATED: 3}.get(team, 0), team


def statement_report(chargeback: Chargeback, config: Config) -> Report | None:
    """The month-to-date report of one join, built as `report` builds it; None before costs."""
    if chargeback.month is None:
        return None
    kinds = {m.model: "external" if m.external else "self_hosted" for m in config.llm_models}
    report = build_report(
        chargeback.month,
        config.currency,
        chargeback.period.label,
        chargeback.budgets,
        model_rows(chargeback.llm_usage, chargeback.llm_pricing, kinds),
        idle=chargeback.month_idle,
        units=chargeback.units,
    )
    report = with_operations(report, chargeback)
    return replace(report, reconciliation=reconciliation_table(chargeback))


def build_statement(report: Report, chargeback: Chargeback, config: Config) -> Statement:
    """The statement of `report`, which was built from `chargeback`."""
    teams, spend = _llm_matrix(report, chargeback)
    return Statement(
        report,
        chargeback.at.astimezone(config.zone),
        config.timezone,
        _budget_lines(report, chargeback, config),
        _idle_parts(report),
        _borrowing(report),
        teams,
        spend,
        config.report.cluster,
        dimensions=dimension_reports(chargeback, report),
    )


def only_dimension(statement: Statement, name: str | None) -> Statement:
    """The statement with one dimension's table (`--by NAME`), or as it is without a name."""
    if name is None:
        return statement
    return replace(statement, dimensions=tuple(d for d in statement.dimensions if d.by == name))


def for_team(statement: Statement, team: str) -> Statement:
    """The statement of one team: its row, its share of idle, its quota, models and budgets.

    Raises ValueError naming the report's teams when `team` is not one of them.
    """
    report = statement.report
    rows = tuple(r for r in report.rows if r.team == team)
    if not rows:
        known = ", ".join(r.team for r in report.rows)
        raise ValueError(f"no team {team!r} in {report.month}: the teams are {known}")
    (row,) = rows
    backlog = backlog_of_team(report.backlog, team) if report.backlog is not None else None
    advice = advice_of_team(report.advice, team) if report.advice is not None else None
    queues = queues_of_team(report.queues, team) if report.queues is not None else None
    mine = replace(
        report,
        rows=rows,
        columns=dict(row.costs),
        total=row.total,
        backlog=backlog,
        advice=advice,
        queues=queues,
    )
    spend = {}
    if team in statement.llm_teams:
        at = statement.llm_teams.index(team)
        spend = {m: (v[at],) for m, v in statement.llm_spend.items() if v[at]}
    return replace(
        statement,
        report=mine,
        budgets=tuple(b for b in statement.budgets if b.team == team),
        idle=tuple(p for p in statement.idle if p[0] == team),
        borrowing=tuple(b for b in statement.borrowing if b[0] == team),
        dimensions=(),
        llm_teams=(team,) if spend else (),
        llm_spend=spend,
        team=team,
    )


def _kind_of(costs: Mapping[str, float | Decimal], kind: str) -> Decimal:
    """A team's cost of one budget kind: `llm` is external LLM spend, `gpu` everything else
    (the recording rules' split, so the page and the dashboards agree)."""
    llm = Decimal(str(costs.get(LLM_EXTERNAL, 0)))
    total = sum((Decimal(str(v)) for v in costs.values()), Decimal(0))
    return llm if kind == "llm" else total - llm


def _budget_lines(report: Report, chargeback: Chargeback, config: Config) -> tuple[BudgetLine, ...]:
    """Budgets against month to date and the month-end forecast (the exporter's own, as the
    server's series and budget alerts have it; docs/forecast.md): a closed month, or a join
    without a forecast, forecasts what it spent."""
    found = chargeback.forecast if not report.closed else None
    lines = []
    for row in report.rows:
        for kind, budget in zip(KINDS, (row.budget_gpu, row.budget_llm), strict=True):
            if budget is None:
                continue
            actual = _kind_of(row.costs, kind)
            forecast = actual
            bounds = found.kinds.get((row.team, kind)) if found is not None else None
            if bounds is not None:
                forecast = _money(round_cents(cents(bounds.mid)))
            lines.append(BudgetLine(row.team, kind, budget, actual, forecast))
    return tuple(lines)


def _idle_parts(report: Report) -> tuple[tuple[str, Decimal], ...]:
    """The month's idle by where it landed: each team's `idle_share`, what reservations
    absorbed, and what stayed on `__idle__`; the parts add to the header's idle.

    Only a rule that charges GPU quota (`reservation`) absorbs idle, hence the label; the
    figure itself comes from the report's sums (`report._shared_idle`), not from the policy.
    """
    parts = [
        (row.team, row.costs[Component.IDLE_SHARE])
        for row in report.rows
        if row.costs.get(Component.IDLE_SHARE, Decimal(0)) != 0
    ]
    absorbed = report.idle_shared - report.columns.get(Component.IDLE_SHARE, Decimal(0))
    if absorbed:
        parts.append((ABSORBED, absorbed))
    parts.append((IDLE, report.idle - report.idle_shared))
    return tuple(parts)


def _borrowing(report: Report) -> tuple[tuple[str, Decimal, Decimal], ...]:
    """Teams charged for quota they borrowed, or credited for quota they lent."""
    zero = Decimal(0)
    out = []
    for row in report.rows:
        borrowed, lent = (
            row.costs.get(Component.BORROWED, zero),
            row.costs.get(Component.LENT, zero),
        )
        if borrowed or lent:
            out.append((row.team, borrowed, lent))
    return tuple(out)


def _llm_matrix(
    report: Report, chargeback: Chargeback
) -> tuple[tuple[str, ...], dict[str, tuple[Decimal, ...]]]:
    """LLM spend per model and team, footed so each model's spend is the model table's."""
    models = [m.model for m in report.models]
    teams = sorted({team for team, _ in chargeback.llm_usage}, key=_order)
    if not models or not teams:
        return (), {}
    exact = [
        [cents(getattr(chargeback.llm_usage.get((t, m)), "spend", None) or 0.0) for t in teams]
        for m in models
    ]
    footed = foot(exact)
    spend = {m: tuple(_money(c) for c in footed.cells[i]) for i, m in enumerate(models)}
    printed = {m.model: m.spend for m in report.models}
    if any(sum(v, Decimal(0)) != printed[m] for m, v in spend.items()):
        # Cannot happen while footing favours row totals; a chart that disagrees with the
        # table would be worse than none.
        log.warning("LLM spend per team does not foot to the model table; chart left out")
        return (), {}
    return tuple(teams), spend
