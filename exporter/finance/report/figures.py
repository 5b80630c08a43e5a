"""The month's chargeback for finance, rounded so it foots: the Report, its rows, build_report."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from exporter.finance.report.backlog import BacklogTable
from exporter.finance.report.footing import cents, foot, largest_remainder, round_cents
from exporter.finance.report.forecast_table import ForecastTable
from exporter.finance.report.queues import QueueTable
from exporter.finance.report.reconciliation import ReconciliationTable
from exporter.finance.report.teams import TeamUsage
from exporter.ledger.advice import AdviceSet
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm import ModelPricing, TeamModelUsage
from exporter.ledger.llm.weights import CompletionWeight
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.gpu_history_records import GpuMonth

__all__ = [
    "KUEUE_NOW",
    "PROMETHEUS",
    "QUOTA_BASIS",
    "TABLES",
    "GpuOperation",
    "ModelRow",
    "Report",
    "TeamRow",
    "build_report",
    "ledger_component",
    "model_rows",
]

# A closed month's quota figures rest on Kueue's quotas when the report runs: Kueue keeps no
# history. Said without the instant, so a closed month prints the same bytes whenever it runs.
KUEUE_NOW = "kueue_now"
# With report.prometheus: the month's time-weighted average of the exporter's own quota series.
PROMETHEUS = "prometheus"
QUOTA_BASIS = {
    KUEUE_NOW: "Quota figures rest on Kueue's nominal quotas and lending limits as they are "
    "when the report runs (Kueue keeps no history); borrowing is measured from the month's "
    "GPU-hours",
    PROMETHEUS: "Quota figures rest on the month's time-weighted average of the nominal quotas "
    "and lending limits the exporter published, read back from Prometheus; borrowing is "
    "measured from the month's GPU-hours",
}
# Every table CSV writes (`--table`): the team, model and backlog tables, then the unit
# economics' (exporter.finance.report.formats.UNIT_TABLES).
TABLES = (
    *("teams", "models", "backlog", "forecast"),
    *("gpu_prices", "gpu_price_builds", "gpu_energy_now"),
    *("llm_models", "llm_teams", "build_or_buy_teams", "build_or_buy_models"),
    "llm_completion_weights",
    *("advice", "advice_withheld"),
    *("queues", "queue_teams"),
    "reconciliation",
)
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class TeamRow:
    """One team's printed costs per component, its total, and its GPU and LLM budgets."""

    team: str
    costs: Mapping[str, Decimal]
    total: Decimal
    budget_gpu: Decimal | None = None
    budget_llm: Decimal | None = None


@dataclass(frozen=True)
class ModelRow:
    """One LLM model this month: its kind, what LiteLLM charged, counts, and pricing drift."""

    model: str
    kind: str  # external | self_hosted | undeclared
    spend: Decimal
    prompt_tokens: int
    completion_tokens: int
    requests: int
    declared: float | None = None
    measured: float | None = None
    recommended_input: float | None = None
    recommended_output: float | None = None


@dataclass(frozen=True)
class GpuOperation:
    """The period's GPU operation per team (None when not known) and where it came from, in
    words (exporter.finance.report.gpu_month)."""

    basis: str
    month: GpuMonth | None = None


@dataclass(frozen=True)
class Report:
    """Printed figures that foot: team rows, component totals, the grand total, idle, models."""

    currency: str
    month: str  # YYYY-MM in the configured time zone
    components: tuple[str, ...]
    rows: tuple[TeamRow, ...]
    columns: Mapping[str, Decimal]
    total: Decimal
    idle: Decimal  # the month's idle cost, whatever the policy
    idle_shared: Decimal  # the part of it the policy put on teams (the rest is `__idle__`)
    models: tuple[ModelRow, ...] = ()
    closed: bool = False  # a closed past month rather than the month to date
    quota_basis: str | None = None  # what a closed month's quota figures rest on (KUEUE_NOW)
    usage: Mapping[str, TeamUsage] = field(default_factory=dict)  # operating figures per team
    backlog: BacklogTable | None = None  # the labelling backlog (finance.report.operations)
    team: str | None = None  # the one team a team's report is about
    units: UnitEconomics | None = None  # unit economics (exporter.finance.report.units)
    by: str = "team"  # what a row is: a team, or a value of the dimension of this name
    weights: tuple[CompletionWeight, ...] = ()  # per self-hosted model (finance.report.weights)
    gpu: GpuOperation | None = None  # idle GPU-hours, utilisation, energy, CO2e of the period
    advice: AdviceSet | None = None  # right-sizing advice over its window (finance.report.advice)
    forecast: ForecastTable | None = None  # the month's end, month to date only
    queues: QueueTable | None = None  # Kueue's queues priced (finance.report.queues)
    # The bills against the records (exporter.finance.report.reconciliation); None without.
    reconciliation: ReconciliationTable | None = None

    @property
    def unallocated(self) -> Decimal:
        """The printed total of `__unallocated__`."""
        return next((r.total for r in self.rows if r.team == UNALLOCATED), Decimal(0))

    @property
    def unallocated_share(self) -> float:
        """Unallocated cost as a percentage of the total (0 when nothing was spent)."""
        return float(100 * self.unallocated / self.total) if self.total else 0.0

    @property
    def model_spend(self) -> Decimal:
        """The printed total of the models' spend."""
        return sum((m.spend for m in self.models), Decimal(0))


def _row_order(team: str) -> tuple[int, str]:
    # Teams first by name, then the reserved rows in a fixed order finance can rely on.
    reserved = {OTHER: 1, IDLE: 2, UNALLOCATED: 3}
    return reserved.get(team, 0), team


def _money(value: int | Decimal) -> Decimal:
    return (Decimal(value) / 100).quantize(_CENT)


def _budget(budgets: Mapping[tuple[str, str], float], team: str, kind: str) -> Decimal | None:
    amount = budgets.get((team, kind))
    return None if amount is None else _money(round_cents(cents(amount)))


def build_report(
    ledger: Ledger,
    currency: str,
    month: str,
    budgets: Mapping[tuple[str, str], float],
    models: tuple[ModelRow, ...] = (),
    *,
    idle: float | None = None,
    closed: bool = False,
    quota_basis: str | None = None,
    units: UnitEconomics | None = None,
    by: str = "team",
) -> Report:
    """Round a month's ledger so it foots; `__idle__` and `__unallocated__` always show.

    Args:
        budgets: monthly budgets keyed (team, kind), kind `gpu` or `llm`.
        idle: the month's idle cost as OpenCost reported it; without it, the `__idle__` row
            plus the `idle_share` component (which misses GPU idle a quota charge absorbed).
    """
    by_team = ledger.by_team()
    for reserved in (IDLE, UNALLOCATED):
        by_team.setdefault(reserved, {})
    used = {c for costs in by_team.values() for c in costs}
    components = tuple(c.value for c in Component if c in used)
    teams = sorted(by_team, key=_row_order)
    footed = foot([[cents(by_team[t].get(c, 0.0)) for c in components] for t in teams])
    rows = tuple(
        TeamRow(
            team,
            {c: _money(v) for c, v in zip(components, footed.cells[i], strict=True)},
            _money(footed.rows[i]),
            _budget(budgets, team, "gpu"),
            _budget(budgets, team, "llm"),
        )
        for i, team in enumerate(teams)
    )
    columns = {c: _money(v) for c, v in zip(components, footed.columns, strict=True)}
    idle_row = next(r.total for r in rows if r.team == IDLE)
    idle_shared = _shared_idle(ledger, idle, by_team[IDLE], columns.get(Component.IDLE_SHARE))
    return Report(
        currency,
        month,
        components,
        rows,
        columns,
        _money(footed.total),
        idle_row + idle_shared,
        idle_shared,
        models,
        closed,
        quota_basis,
        units=units,
        by=by,
    )


def _shared_idle(
    ledger: Ledger, idle: float | None, idle_row: Mapping[str, float], share: Decimal | None
) -> Decimal:
    """The idle the policy put on teams, in printed figures: the printed `idle_share` column,
    plus what a quota charge absorbed (idle neither on `__idle__` nor in `idle_share`), rounded.

    So the header's idle is the printed `__idle__` row plus that, and foots with the table.
    The absorbed part is what the sums leave over, so this holds under every policy without
    asking which one is in force (only a rule that charges GPU quota, `reservation`, absorbs).
    """
    shared = share or Decimal(0)
    if idle is None:
        return shared
    exact = ledger_component(ledger, Component.IDLE_SHARE)
    absorbed = cents(idle) - cents(sum(idle_row.values())) - cents(exact)
    return shared + _money(round_cents(absorbed))


def ledger_component(ledger: Ledger, component: str) -> float:
    """One component summed over every team."""
    return sum(v for (_, c), v in sorted(ledger.costs.items()) if c == component)


def model_rows(
    usage: Mapping[tuple[str, str], TeamModelUsage],
    pricing: Iterable[ModelPricing],
    kinds: Mapping[str, str],
) -> tuple[ModelRow, ...]:
    """Per-model LLM figures from the join's typed usage and pricing (the samples' own numbers).

    A (team, model) whose spend the proxy did not report adds no spend, as its series is absent.
    Spend is rounded by largest remainder, so the models' printed spend adds to its total.
    """
    spend: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, tuple[int, int, int]] = defaultdict(lambda: (0, 0, 0))
    for (_, model), use in sorted(usage.items()):
        spend[model] += cents(use.spend or 0.0)
        prompt, completion, requests = counts[model]
        counts[model] = (
            prompt + use.prompt_tokens,
            completion + use.completion_tokens,
            requests + use.requests,
        )
    names = sorted(spend)
    total = round_cents(sum(spend.values(), Decimal(0)))
    printed = largest_remainder([spend[m] for m in names], total)
    priced = {p.model: p for p in pricing}
    rows = []
    for model, amount in zip(names, printed, strict=True):
        p = priced.get(model)
        rows.append(
            ModelRow(
                model,
                kinds.get(model, "undeclared"),
                _money(amount),
                counts[model][0],
                counts[model][1],
                counts[model][2],
                p.declared if p else None,
                p.measured if p else None,
                p.recommended_input if p else None,
                p.recommended_output if p else None,
            )
        )
    return tuple(rows)
