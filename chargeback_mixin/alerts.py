"""Alerting rules (group `chargeback`): idle, budget, borrowing, pricing and health alerts.

Severities follow the usual mixin meanings: critical pages now, warning goes to a work queue,
info is context for troubleshooting. Every alert carries a static `summary`, a templated
`description` and a `runbook_url` pointing at its anchor in docs/runbook.md.
"""

from __future__ import annotations

from chargeback_mixin.alert import Alert, pct
from chargeback_mixin.config import MixinConfig
from chargeback_mixin.health_alerts import health_alerts, self_alerts
from chargeback_mixin.queue_alerts import queue_alerts
from chargeback_mixin.rules import (
    BILL_DRIFT,
    BUDGET_FORECAST_RATIO,
    BUDGET_USED_RATIO,
    COST_DEPARTURE,
    IDLE_GPU_RATIO,
    LLM_BUDGET_FORECAST_RATIO,
    LLM_BUDGET_RATIO,
    LLM_PRICE_DRIFT,
    QUOTA_BORROWED,
    UNALLOCATED_COST_RATIO,
    Rule,
    allocated_gpus,
)

__all__ = ["GROUP", "alert_names", "alerting_rules", "alerts"]

GROUP = "chargeback"


def _cost_alerts(c: MixinConfig) -> list[Alert]:
    return [
        Alert(
            "ChargebackIdleGpuCostHigh",
            # GPUs only: idle CPU and memory, however large, are not idle GPUs.
            f"{IDLE_GPU_RATIO} > {c.idle_cost_share:g}",
            c.idle_cost_for,
            "warning",
            "Idle GPU capacity costs a large share of the cluster's GPUs.",
            "Idle GPUs<in-cluster> cost {{ $value | humanizePercentage }} of the cluster's GPU "
            f"cost per hour, above {pct(c.idle_cost_share)} for {c.idle_cost_for}.",
        ),
        Alert(
            "ChargebackTeamGpusIdle",
            f"team:chargeback_team_gpu_utilization_ratio:avg < {c.idle_utilization:g}"
            f" and on ({c.cluster_label}, team) {allocated_gpus(c)} > 0",
            c.team_gpus_idle_for,
            "warning",
            "A team holds GPUs it does not use.",
            "Team {{ $labels.team }}<in-cluster> holds GPUs at "
            "{{ $value | humanizePercentage }} mean "
            f"utilisation, below {pct(c.idle_utilization)} for {c.team_gpus_idle_for}.",
        ),
        Alert(
            "ChargebackUnallocatedShareHigh",
            # Without the scope label the rule sets, so the alert's labels are the cluster's.
            f"sum without (scope) ({UNALLOCATED_COST_RATIO}) > {c.unallocated_share:g}",
            c.unallocated_for,
            "warning",
            "A large share of the cost belongs to no team.",
            "{{ $value | humanizePercentage }} of the cost per hour<in-cluster> is on "
            "__unallocated__, "
            f"above {pct(c.unallocated_share)} for {c.unallocated_for}.",
        ),
        Alert(
            "ChargebackTeamCostAnomaly",
            f"{COST_DEPARTURE} > {c.cost_anomaly_share:g}"
            f" or {COST_DEPARTURE} < -{c.cost_anomaly_share:g}",
            c.cost_anomaly_for,
            "warning",
            "A team's cost per hour has departed from its own baseline.",
            "Team {{ $labels.team }}<in-cluster> has cost "
            "{{ $value | humanizePercentage }} more per hour "
            f"over the last {c.cost_anomaly_recent_window} than its "
            f"{c.cost_anomaly_baseline_window} average (negative when it costs less), beyond "
            f"{pct(c.cost_anomaly_share)} either way for {c.cost_anomaly_for}.",
        ),
        Alert(
            "ChargebackBorrowingSustained",
            f"sum without (resource) ({QUOTA_BORROWED}) > {c.borrowing_min_gpus:g}",
            c.borrowing_for,
            "info",
            "A team keeps borrowing GPU quota from its cohort.",
            "Team {{ $labels.team }}<in-cluster> has borrowed {{ $value | humanize }} GPUs "
            "from its cohort "
            f"for {c.borrowing_for}; it pays for them as the borrowed component.",
        ),
    ]


def _gpu_budget_alerts(c: MixinConfig) -> list[Alert]:
    used = f'{BUDGET_USED_RATIO}{{kind="gpu"}}'
    forecast = f'{BUDGET_FORECAST_RATIO}{{kind="gpu"}}'
    return [
        Alert(
            "ChargebackTeamGpuBudgetExceeded",
            f"{used} > 1",
            c.gpu_budget_for,
            "warning",
            "A team has spent more than its monthly GPU budget.",
            "Team {{ $labels.team }}<in-cluster> has spent {{ $value | humanizePercentage }} "
            "of its monthly "
            "GPU budget this month.",
        ),
        Alert(
            "ChargebackTeamGpuBudgetForecastExceeded",
            f"{forecast} > 1 and on ({c.cluster_label}, team, kind) {used} <= 1",
            c.gpu_budget_forecast_for,
            "info",
            "A team will exceed its monthly GPU budget before the month ends.",
            "By the exporter's month-end forecast, team {{ $labels.team }}<in-cluster> will "
            "spend {{ $value | humanizePercentage }} of its monthly GPU budget by the end of "
            "the month (in the exporter's time zone).",
        ),
    ]


def _llm_budget_alerts(c: MixinConfig) -> list[Alert]:
    ratio = LLM_BUDGET_RATIO
    window = "of its LiteLLM max_budget in the current budget window"
    return [
        Alert(
            "ChargebackLlmBudgetAt80Percent",
            f"{ratio} >= {c.llm_budget_warning:g} < {c.llm_budget_critical:g}",
            c.llm_budget_for,
            "info",
            f"A team has used {pct(c.llm_budget_warning)} of its LLM budget.",
            "Team {{ $labels.team }}<in-cluster> has spent "
            "{{ $value | humanizePercentage }} " + window + ".",
        ),
        Alert(
            "ChargebackLlmBudgetAt95Percent",
            f"{ratio} >= {c.llm_budget_critical:g} < 1",
            c.llm_budget_for,
            "warning",
            f"A team has used {pct(c.llm_budget_critical)} of its LLM budget.",
            "Team {{ $labels.team }}<in-cluster> has spent "
            "{{ $value | humanizePercentage }} " + window + "; "
            "LiteLLM rejects its requests at 100%.",
        ),
        Alert(
            "ChargebackLlmBudgetExceeded",
            f"{ratio} >= 1",
            c.llm_budget_for,
            "critical",
            "A team has exhausted its LLM budget; LiteLLM rejects its requests.",
            "Team {{ $labels.team }}<in-cluster> has spent "
            "{{ $value | humanizePercentage }} " + window + ".",
        ),
        Alert(
            "ChargebackLlmBudgetForecastExceeded",
            f"{LLM_BUDGET_FORECAST_RATIO} > 1"
            f" and on ({c.cluster_label}, team) {ratio} < {c.llm_budget_critical:g}",
            c.llm_budget_forecast_for,
            "info",
            "A team will exhaust its LLM budget before LiteLLM resets it.",
            "At its current rate team {{ $labels.team }}<in-cluster> will spend "
            "{{ $value | humanizePercentage }} of its LiteLLM max_budget before the next reset.",
        ),
        Alert(
            "ChargebackSelfHostedPricingDrift",
            f"{LLM_PRICE_DRIFT} > {1 + c.pricing_drift:g}"
            f" or {LLM_PRICE_DRIFT} < {1 - c.pricing_drift:g}",
            c.pricing_drift_for,
            "info",
            "LiteLLM's price for a self-hosted model is far from its measured cost.",
            "LiteLLM prices self-hosted model {{ $labels.model }}<in-cluster> at "
            "{{ $value | humanizePercentage }} of its measured serving cost per token; "
            "see chargeback_llm_recommended_cost_per_token for the prices to declare.",
        ),
        _gpu_price_alert(c),
        Alert(
            "ChargebackBillDrift",
            f"abs({BILL_DRIFT}) > {c.bill_drift:g}",
            c.bill_drift_for,
            "warning",
            "A provider's bill is far from what the ledger recorded.",
            "The {{ $labels.source }} bill ({{ $labels.provider }}, {{ $labels.scope }})"
            "<in-cluster> differs from what was recorded by {{ $value | humanizePercentage }} "
            "of the billed amount this month; `report --format json` lists the largest "
            "unmatched lines.",
        ),
    ]


def _gpu_price_alert(c: MixinConfig) -> Alert:
    difference = c.dedup("chargeback_cluster_gpu_price_difference_per_hour")
    applied = c.dedup("chargeback_cluster_resource_cost_per_hour", 'resource="gpu"')
    # Applied minus the difference is what OpenCost itself charged for the same GPU-hours.
    charged = f"({applied} - ignoring (resource) {difference})"
    return Alert(
        "ChargebackGpuPriceDiffers",
        f"abs({difference}) / ignoring (resource) {charged} > {c.gpu_price_difference:g}",
        c.gpu_price_difference_for,
        "info",
        "A configured or built GPU price is far from what OpenCost charges.",
        "The GPU-hours<in-cluster> are charged at configured or built prices "
        "{{ $value | humanizePercentage }} away from OpenCost's own charge for them; see "
        'chargeback_gpu_price_per_hour{source="opencost_charge"} beside each price applied.',
    )


def alerts(c: MixinConfig) -> list[Alert]:
    """Every alert, in the order of docs/runbook.md."""
    return (
        _cost_alerts(c)
        + queue_alerts(c)
        + _gpu_budget_alerts(c)
        + _llm_budget_alerts(c)
        + health_alerts(c)
        + self_alerts(c)
    )


def alerting_rules(c: MixinConfig) -> list[Rule]:
    """Every alert rendered as a Prometheus rule."""
    return [a.render(c) for a in alerts(c)]


def alert_names(c: MixinConfig) -> list[str]:
    """Names of every alert."""
    return [a.name for a in alerts(c)]
