"""The typed result of one join: the month in money, quantities and states, with no samples.

Everything a reader of the ledger needs is a field here, built by keyword: the serving side
renders it as series (`exporter.exposition.series`), and finance reads the same fields for the
report, the statement and FOCUS, so neither reads numbers back out of metrics nor joins again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from exporter.calendar import Month
from exporter.ledger.advice.advise import AdviceSet
from exporter.ledger.attribution import OTHER
from exporter.ledger.costs.backlog import Backlog
from exporter.ledger.costs.cluster import ClusterCosts
from exporter.ledger.costs.consumption import Consumption
from exporter.ledger.costs.gpus import TeamGpus, TeamIdleGpuHours
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.dimensions.beyond_team import DimensionSplit
from exporter.ledger.dimensions.joint import JointSplit
from exporter.ledger.forecast.figures import MonthForecast
from exporter.ledger.llm import ModelPricing, TeamLlmBudget, TeamModelUsage
from exporter.ledger.llm.weights import CompletionWeight
from exporter.ledger.queues.figures import QueueFigures
from exporter.ledger.reconcile import Reconciliation, TrueUp
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading

__all__ = ["Chargeback", "GpuFigures", "LlmFigures"]


@dataclass(frozen=True, kw_only=True)
class GpuFigures:
    """What DCGM says of the GPUs: each team's now, and the month's idle hours with history."""

    teams: tuple[TeamGpus, ...]  # by team, `__unallocated__` holding the free GPUs
    idle_hours: tuple[TeamIdleGpuHours, ...] | None  # None: the source keeps no history
    endpoints: Mapping[str, int]  # the source's endpoints by state, as it found them


@dataclass(frozen=True, kw_only=True)
class LlmFigures:
    """What LiteLLM says per team and model, and what the ledger made of it."""

    usage: Mapping[tuple[str, str], TeamModelUsage]  # (team, model)
    budgets: tuple[TeamLlmBudget, ...]  # LiteLLM's own budget windows per team
    # With OpenCost's serving cost: declared against measured prices, and what is undeclared.
    pricing: tuple[ModelPricing, ...] = ()
    unknown_models: tuple[str, ...] | None = None  # None without OpenCost
    # Models beyond attribution.max_models: their team x model series count as `__other__`
    # (the usage above keeps every model, for the report).
    folded_models: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Chargeback:
    """One join of a reading: both ledgers, folded, and every figure beside them."""

    reading: Reading
    budgets: Mapping[tuple[str, str], float]  # (team, kind): declared, or built from quota
    units: UnitEconomics
    weights: tuple[CompletionWeight, ...] = ()  # per self-hosted model
    # The team ledgers, teams over the cap folded into `__other__`; None without OpenCost.
    hourly: Ledger | None = None
    month: Ledger | None = None
    folded_teams: tuple[str, ...] = ()
    cluster: ClusterCosts | None = None  # OpenCost's own figures, before any policy
    gpus: GpuFigures | None = None  # None without DCGM
    quota: tuple[QueueQuota, ...] | None = None  # None without Kueue
    # Preemption, waiting, ceilings, borrowing ahead, fair share (docs/queues.md); None
    # without Kueue, parts missing when Workloads or Kueue's metrics were not read.
    queues: QueueFigures | None = None
    llm: LlmFigures | None = None  # None without LiteLLM
    # The month's labelling backlog and GPU-hours per team (placed as the cost, before any fold).
    backlog: Backlog | None = None
    gpu_hours: Mapping[str, float] = field(default_factory=dict)
    dimensions: tuple[DimensionSplit, ...] = ()  # config order
    # Asked for in detail (FOCUS): the month by every dimension at once, and its consumption,
    # both counted as the ledgers count (teams the cap folded under `__other__`).
    joint: JointSplit = field(default_factory=JointSplit)
    consumption: Consumption = field(default_factory=Consumption)
    # Right-sizing advice over the history window; None without `advice:` or its history.
    advice: AdviceSet | None = None
    # Where the month will end (exporter.ledger.forecast); None until asked for, or without
    # OpenCost.
    forecast: MonthForecast | None = None
    # The bills against the records; None without bills. A closed month's true-ups are in
    # the month ledger already (component `true_up`), listed here by bill.
    reconciliation: Reconciliation | None = None
    true_ups: tuple[TrueUp, ...] = ()

    @property
    def at(self) -> datetime:
        """The instant the sources were read at."""
        return self.reading.at

    @property
    def period(self) -> Month:
        """The calendar month joined."""
        return self.reading.month

    def counted_as(self, team: str) -> str:
        """The team a team's figures count under in the ledgers: `__other__` once folded."""
        return OTHER if team in self._folded else team

    @cached_property
    def _folded(self) -> frozenset[str]:
        return frozenset(self.folded_teams)

    @property
    def llm_usage(self) -> Mapping[tuple[str, str], TeamModelUsage]:
        """LiteLLM's month to date per (team, model); empty without LiteLLM."""
        return self.llm.usage if self.llm is not None else {}

    @property
    def llm_pricing(self) -> tuple[ModelPricing, ...]:
        """Declared against measured cost per weighted token, per self-hosted model."""
        return self.llm.pricing if self.llm is not None else ()

    @property
    def month_idle(self) -> float | None:
        """The month's idle cost as OpenCost reported it, before any policy; None without it."""
        return self.cluster.month_idle if self.cluster is not None else None
