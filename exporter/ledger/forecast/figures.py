"""The month-end forecast in the typed month: per team, per budget kind, per dimension value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from exporter.ledger.forecast.method import Bounds

__all__ = ["GPU_KIND", "LLM_KIND", "MonthForecast"]

# The budget kinds (chargeback_team_budget): the external providers' bill is `llm`, every other
# component (the hardware, as the team causes it) is `gpu`, as the shipped rules count them.
GPU_KIND = "gpu"
LLM_KIND = "llm"


@dataclass(frozen=True, kw_only=True)
class MonthForecast:
    """Where the month will end: each figure's low, middle and high, and what they rest on."""

    elapsed_days: float  # of the month, today's fraction included
    length_days: float
    whole_days: int  # whole days the cluster's spread was measured on
    prior: bool  # last month's rate blended in (the month is young and last month was seen)
    cluster: Bounds
    teams: Mapping[str, Bounds] = field(default_factory=dict)
    kinds: Mapping[tuple[str, str], Bounds] = field(default_factory=dict)  # (team, kind)
    dimensions: Mapping[tuple[str, str], Bounds] = field(default_factory=dict)  # (name, value)
