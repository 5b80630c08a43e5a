"""Alerting rules (group `chargeback`): idle, budget, borrowing, pricing and health alerts.

Severities follow the usual mixin meanings: critical pages now, warning goes to a work queue,
info is context for troubleshooting. Every alert carries a static `summary`, a templated
`description` and a `runbook_url` pointing at its anchor in docs/runbook.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from chargeback_mixin.config import MixinConfig
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

__all__ = ["GROUP", "Alert", "alert_names", "alerting_rules", "alerts"]

GROUP = "chargeback"
# Where a description names the alert's cluster; empty when the series have no cluster label,
# so single-cluster texts read as before.
IN_CLUSTER = "<in-cluster>"
FAILED = 'state="failed"'


@dataclass(frozen=True)
class Alert:
    """One alerting rule before rendering."""

    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str

    def render(self, c: MixinConfig) -> Rule:
        """The rule as Prometheus reads it."""
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.for_,
            "labels": {"severity": self.severity},
            "annotations": {
                "summary": self.summary,
                "description": self.description.replace(IN_CLUSTER, _in_cluster(c)),
                "runbook_url": c.runbook(self.name),
            },
        }


def _in_cluster(c: MixinConfig) -> str:
    return "{{ with $labels." + c.cluster_label + " }} in cluster {{ . }}{{ end }}"


def _pct(ratio: float) -> str:
    return f"{ratio * 100:g}%"


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
            f"cost per hour, above {_pct(c.idle_cost_share)} for {c.idle_cost_for}.",
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
            f"utilisation, below {_pct(c.idle_utilization)} for {c.team_gpus_idle_for}.",
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
            f"above {_pct(c.unallocated_share)} for {c.unallocated_for}.",
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
            f"{_pct(c.cost_anomaly_share)} either way for {c.cost_anomaly_for}.",
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
            f"A team has used {_pct(c.llm_budget_warning)} of its LLM budget.",
            "Team {{ $labels.team }}<in-cluster> has spent "
            "{{ $value | humanizePercentage }} " + window + ".",
        ),
        Alert(
            "ChargebackLlmBudgetAt95Percent",
            f"{ratio} >= {c.llm_budget_critical:g} < 1",
            c.llm_budget_for,
            "warning",
            f"A team has used {_pct(c.llm_budget_critical)} of its LLM budget.",
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


def _health_alerts(c: MixinConfig) -> list[Alert]:
    return [
        Alert(
            "ChargebackSourceDown",
            f"chargeback_source_up{c.sel()} == 0",
            c.source_down_for,
            "warning",
            "The exporter cannot refresh one of its sources.",
            "Source {{ $labels.source }} of {{ $labels.instance }}<in-cluster> has failed "
            "every refresh for "
            f"{c.source_down_for}; its families keep their last good values until they go stale.",
        ),
        Alert(
            "ChargebackSourceStale",
            f"time() - chargeback_source_last_success_timestamp_seconds{c.sel()}"
            f" > {c.source_stale_seconds:g}",
            c.source_stale_for,
            "warning",
            "A source's data is old.",
            "Source {{ $labels.source }} of {{ $labels.instance }}<in-cluster> last refreshed "
            "{{ $value | humanizeDuration }} ago.",
        ),
        Alert(
            "ChargebackExporterAbsent",
            # Per cluster when its targets are all down; absent() when none is scraped at all.
            f"max {c.by()} (up{c.sel()}) == 0 or absent(up{c.sel()})",
            c.exporter_absent_for,
            "critical",
            "The chargeback exporter has disappeared from Prometheus.",
            f"No target matching up{c.sel()}<in-cluster> has been up for {c.exporter_absent_for}; "
            "chargeback metrics, rules and alerts are blind.",
        ),
    ]


def _each_replica(c: MixinConfig, fn: str, metric: str, window: str, *matchers: str) -> str:
    """`fn` over each replica's own counter, then one copy: resets stay per replica."""
    # Merging replicas before rate()/increase() would read two counters as one that resets.
    inner = f"{fn}({metric}{c.sel(*matchers)}[{window}])"
    return f"max without ({', '.join(c.replica_labels)}) ({inner})"


def _count(value: str = "$value") -> str:
    # increase() extrapolates to the window's edges (1 restart may read 1.02): show whole ones.
    return "{{ " + value + ' | printf "%.0f" }}'


def _self_alerts(c: MixinConfig) -> list[Alert]:
    """The exporter's own health: discovery, validation, builds, the worker, reconciles, caps."""
    return [
        Alert(
            "ChargebackSourceEndpointsFailed",
            f"{c.dedup('chargeback_source_endpoints', FAILED)} > {c.failed_endpoints_min:g}",
            c.failed_endpoints_for,
            "warning",
            "A source cannot read some of its endpoints; their GPUs run on their last good read.",
            "{{ $value | humanize }} endpoints of source {{ $labels.source }}<in-cluster> have "
            f"failed for {c.failed_endpoints_for}; the GPUs behind them keep their last good "
            "read (power unknown) until it is older than max_staleness, then leave the GPU "
            "families.",
        ),
        Alert(
            "ChargebackBuildFailing",
            _each_replica(c, "increase", "chargeback_build_errors_total", c.build_errors_window)
            + " > 0",
            c.build_errors_for,
            "warning",
            "The exporter keeps failing to build its exposition and serves stale figures.",
            "The {{ $labels.stage }} stage of the exposition<in-cluster> has kept failing for "
            f"{c.build_errors_for} (failures in the last {c.build_errors_window}: "
            + _count()
            + "); the exporter serves its last good figures, each source's only until its "
            "max_staleness.",
        ),
        Alert(
            "ChargebackSourceRecordsDropped",
            # Identical duplicates are kept once: dropping them loses nothing.
            _each_replica(
                c,
                "rate",
                "chargeback_source_records_dropped_total",
                c.records_dropped_window,
                'reason!="duplicate"',
            )
            + f" * 3600 > {c.records_dropped_per_hour:g}",
            c.records_dropped_for,
            "info",
            "A source keeps dropping upstream records that fail validation.",
            "Source {{ $labels.source }}<in-cluster> drops {{ $value | humanize }} records an "
            "hour as {{ $labels.reason }} (above "
            f"{c.records_dropped_per_hour:g} an hour for {c.records_dropped_for}); "
            "each such read is refused and its last complete one served (a corrupt DCGM "
            "sample only leaves its GPU's utilisation unknown).",
        ),
        Alert(
            "ChargebackWorkerRestarted",
            _each_replica(
                c, "increase", "chargeback_worker_restarts_total", c.worker_restarts_window
            )
            + " > 0",
            c.worker_restarts_for,
            "warning",
            "The exporter's refresh worker died and was restarted.",
            "The refresh worker of the exporter<in-cluster> died and was started again "
            f"(restarts in the last {c.worker_restarts_window}: " + _count() + "); scrapes "
            "kept the last values meanwhile.",
        ),
        Alert(
            "ChargebackWorkerDown",
            # Per cluster: while one replica's worker works, its figures keep coming.
            f"max {c.by()} ({c.dedup('chargeback_worker_up')}) == 0",
            c.worker_down_for,
            "critical",
            "No exporter replica has a working refresh worker: the figures stop.",
            "No replica of the exporter<in-cluster> has had a working refresh worker for "
            f"{c.worker_down_for}: it cannot start, or it has sent no figures within the "
            "shortest max_staleness. The exporter then serves no source figures.",
        ),
        Alert(
            "ChargebackSourceClosedDaysRepaired",
            _each_replica(
                c,
                "increase",
                "chargeback_source_reconcile_repairs_total",
                c.reconcile_repairs_window,
            )
            + " > 0",
            c.reconcile_repairs_for,
            "info",
            "Closed days changed upstream and the exporter corrected its figures.",
            "Re-reading its closed days, source {{ $labels.source }}<in-cluster> found kept "
            f"records changed upstream and corrected them (in the last "
            f"{c.reconcile_repairs_window}: " + _count() + "); month-to-date figures moved.",
        ),
        Alert(
            "ChargebackTeamsFolded",
            f"{c.dedup('chargeback_teams_over_cap')} > 0",
            c.teams_folded_for,
            "warning",
            "Teams beyond attribution.max_teams are charged together as __other__.",
            "{{ $value | humanize }} teams<in-cluster> are beyond attribution.max_teams: "
            "their cost is folded into __other__, so neither the dashboards nor the statement "
            "show it per team.",
        ),
    ]


def alerts(c: MixinConfig) -> list[Alert]:
    """Every alert, in the order of docs/runbook.md."""
    # Imported here: the queue alerts build on Alert, declared in this module.
    from chargeback_mixin.queue_alerts import queue_alerts

    return (
        _cost_alerts(c)
        + queue_alerts(c)
        + _gpu_budget_alerts(c)
        + _llm_budget_alerts(c)
        + _health_alerts(c)
        + _self_alerts(c)
    )


def alerting_rules(c: MixinConfig) -> list[Rule]:
    """Every alert rendered as a Prometheus rule."""
    return [a.render(c) for a in alerts(c)]


def alert_names(c: MixinConfig) -> list[str]:
    """Names of every alert."""
    return [a.name for a in alerts(c)]
