"""The recording-rule names of release 0.1, kept as aliases of the new names until 0.3.

Release 0.2 renamed 19 recording rules to Prometheus' `level:metric:operations` practice, and
one more whose family moved to base units (idle GPU-hours to GPU-seconds). Each
old name is recorded again here, in its own group (`chargeback.rules.deprecated`), from the new
series with the old labels, so dashboards, alerts and queries of one's own keep working for one
release. Release 0.3 removes this group: move queries to the names in docs/mixin.md first.
"""

from __future__ import annotations

from chargeback_mixin import rules
from chargeback_mixin.config import MixinConfig
from chargeback_mixin.rules import Rule

__all__ = ["GROUP", "REMOVED_IN", "aliases", "renamed"]

GROUP = "chargeback.rules.deprecated"
# The release that drops the group.
REMOVED_IN = "0.3.0"


def _no_label(label: str, series: str) -> str:
    """A series without one label the new rule sets (the old name did not carry it)."""
    return f"sum without ({label}) ({series})"


def renamed(c: MixinConfig) -> dict[str, str]:
    """Old name -> the expression that gives it from the new names (with the old labels)."""
    scope = "scope"
    return {
        "cluster:chargeback_hardware_cost_per_hour:sum": _no_label(scope, rules.HARDWARE_COST),
        "cluster:chargeback_idle_cost_per_hour:sum": _no_label(scope, rules.IDLE_COST),
        "cluster:chargeback_idle_cost_per_hour:ratio": _no_label(scope, rules.IDLE_COST_RATIO),
        "cluster:chargeback_unallocated_cost_per_hour:ratio": _no_label(
            scope, rules.UNALLOCATED_COST_RATIO
        ),
        "team:chargeback_team_cost_per_hour:baseline_departure": rules.COST_DEPARTURE,
        "cluster_resource:chargeback_cluster_idle_cost_per_hour:ratio": rules.IDLE_RESOURCE_RATIO,
        "cluster:chargeback_month_hours:length": rules.MONTH_HOURS_LENGTH,
        "cluster:chargeback_month_hours:elapsed": rules.MONTH_HOURS_ELAPSED,
        "cluster:chargeback_month_hours:left": rules.HOURS_LEFT_IN_MONTH,
        "team_kind:chargeback_team_cost_month_end:forecast": rules.MONTH_FORECAST,
        "team_kind:chargeback_team_budget_used:ratio": rules.BUDGET_USED_RATIO,
        "team_kind:chargeback_team_budget_forecast:ratio": rules.BUDGET_FORECAST_RATIO,
        "team:chargeback_gpus_allocated:sum": rules.allocated_gpus(c),
        "team:chargeback_quota_borrowed_gpus:sum": _no_label("resource", rules.QUOTA_BORROWED),
        "team:chargeback_quota_lent_gpus:sum": _no_label("resource", rules.QUOTA_LENT),
        "team:chargeback_team_borrowed_cost_per_hour:sum": rules.borrowed_cost(c),
        "team:chargeback_llm_budget_spend:ratio": rules.LLM_BUDGET_RATIO,
        "team:chargeback_llm_budget_forecast:ratio": rules.LLM_BUDGET_FORECAST_RATIO,
        "model:chargeback_llm_cost_per_token:drift_ratio": rules.LLM_PRICE_DRIFT,
        # The family it sums went from GPU-hours to GPU-seconds (promtool's base units).
        "team:chargeback_team_gpu_idle_hours_month_to_date:sum": (
            "team:chargeback_team_gpu_idle_seconds_month_to_date:sum / 3600"
        ),
    }


def aliases(c: MixinConfig) -> list[Rule]:
    """One recording rule per old name, re-exporting the new series under it."""
    return [{"record": old, "expr": expr} for old, expr in renamed(c).items()]
