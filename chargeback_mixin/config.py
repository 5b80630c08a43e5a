"""The mixin's knobs in one frozen object: selectors, thresholds, `for` durations, dashboards."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["DEFAULT", "SHORT_FOR", "MixinConfig", "load_config"]

_DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

# The `for` of every alert in the short variant the end-to-end test loads.
SHORT_FOR = "1s"


@dataclass(frozen=True)
class MixinConfig:
    """Every knob of the rules, alerts and dashboards; override any field, keep the rest."""

    # --- Selection -------------------------------------------------------------------------
    # Label matchers that select the exporter's series, put inside every `{...}`. Change it when
    # the scrape job has another name, or add `cluster="..."` to pin one cluster of many.
    selector: str = 'job="gpu-chargeback-exporter"'
    # The Kueue resource name of a GPU. Change it for AMD (`amd.com/gpu`) or a MIG resource.
    gpu_resource: str = "nvidia.com/gpu"
    # The currency the exporter is configured with (`currency:` in its config); used in alert
    # text and dashboard units. Keep it equal to chargeback_config_info{currency}.
    currency: str = "EUR"
    # The label that names a cluster. Each cluster's Prometheus sets it as an external label
    # (or a relabeling adds it); every recorded series, alert and dashboard keeps it. Series
    # without it still work: they form one cluster whose label is empty.
    cluster_label: str = "cluster"
    # Labels in which two replicas of one exporter (an HA pair, or the same target scraped by
    # two Prometheus replicas) differ. Rules take the max over them before any sum, so a
    # second replica never doubles a cost. Add a label here if your scrape or remote write
    # sets another per-replica label; never add one that tells two clusters apart.
    replica_labels: tuple[str, ...] = ("instance", "pod", "prometheus_replica")

    # --- Thresholds ------------------------------------------------------------------------
    # ChargebackIdleGpuCostHigh: idle GPU cost over the cluster's GPU cost. Raise it while a new
    # cluster fills up; lower it once the cluster is meant to run hot.
    idle_cost_share: float = 0.30
    # ChargebackTeamGpusIdle: a team's mean GPU utilisation (0..1) under which its allocated
    # GPUs count as idle. Raise it for inference fleets that idle between bursts by design.
    idle_utilization: float = 0.10
    # ChargebackUnallocatedShareHigh: cost nobody owns over total cost. Lower it once every
    # namespace has a team label; raise it during onboarding.
    unallocated_share: float = 0.10
    # ChargebackLlmBudgetAt80Percent / At95Percent: LiteLLM spend over max_budget. Move them
    # together with the alert names if the finance team asks for other steps.
    llm_budget_warning: float = 0.80
    llm_budget_critical: float = 0.95
    # ChargebackSelfHostedPricingDrift: |declared / measured - 1| per token of a self-hosted
    # model. Lower it when LiteLLM's internal prices feed invoices; raise it for noisy traffic.
    pricing_drift: float = 0.25
    # ChargebackGpuPriceDiffers: |applied - OpenCost's| GPU money over OpenCost's, when a
    # configured or built GPU price governs. Raise it when the config prices GPUs on purpose
    # away from OpenCost's pricing and the difference is known.
    gpu_price_difference: float = 0.01
    # ChargebackBillDrift: |billed - recorded| over billed for a bill's month so far. Raise
    # it for a gateway that knowingly misses some spend (cache reads, batch discounts).
    bill_drift: float = 0.05
    # ChargebackBorrowingSustained: GPUs a team borrows from its cohort above which borrowing
    # counts. Raise it when small short-term borrowing is the cohort's intended use.
    borrowing_min_gpus: float = 0.0
    # ChargebackTeamPreemptedWorkHigh: a team's preempted work (GPU-hours Kueue evicted,
    # priced) over its GPU cost this month. Raise it for teams whose batch work is meant to be
    # preemptible; lower it where every preemption is a surprise.
    preempted_cost_share: float = 0.10
    # ChargebackSourceStale: seconds since a source's last good refresh. Keep it above the
    # slowest source's refresh interval (OpenCost on a large cluster can take minutes).
    source_stale_seconds: float = 1800.0
    # Window of deriv() over LiteLLM's budget spend for ChargebackLlmBudgetForecastExceeded.
    # Longer is steadier, shorter reacts faster to a runaway client.
    llm_spend_rate_window: str = "1h"
    # Hours in "a month" for the what-borrowing-would-cost-next-month panels (365 * 24 / 12).
    hours_per_month: float = 730.0
    # ChargebackSourceEndpointsFailed: failed endpoints of a discovering source (DCGM) above
    # which GPUs count as missing. Raise it only where a few nodes are known to be unreachable.
    failed_endpoints_min: float = 0.0
    # ChargebackBuildFailing: window of increase() over failed joins and renders. Keep it
    # shorter than build_errors_for, so one failure between good builds never fires.
    build_errors_window: str = "15m"
    # ChargebackSourceRecordsDropped: records a source drops by validation per hour (per
    # source and reason) above which the drop counts, over records_dropped_window. One bad
    # record in every refresh of a 1-minute source is 60; raise it for a known noisy upstream.
    records_dropped_per_hour: float = 1.0
    records_dropped_window: str = "15m"
    # ChargebackWorkerRestarted: how long one restart of the refresh worker keeps the alert on.
    worker_restarts_window: str = "1h"
    # ChargebackSourceClosedDaysRepaired: how long one reconcile repair keeps the alert on.
    # Keep it at least the sources' reconcile_interval (1h) so repairs at every reconcile
    # read as one lasting alert.
    reconcile_repairs_window: str = "1h"

    # ChargebackTeamCostAnomaly: a team's mean cost per hour over cost_anomaly_recent_window
    # against its own mean over cost_anomaly_baseline_window, as a share either way (0.5: the
    # recent mean is above 1.5x or below 0.5x the baseline). Teams whose baseline is under
    # cost_anomaly_min_cost_per_hour (in the currency per hour) are left out, so a team of
    # pennies doubling stays quiet. Raise the share for bursty training teams.
    cost_anomaly_share: float = 0.5
    cost_anomaly_min_cost_per_hour: float = 1.0
    cost_anomaly_recent_window: str = "3h"
    cost_anomaly_baseline_window: str = "7d"

    # --- `for` durations -------------------------------------------------------------------
    # How long a condition must hold before the alert fires. Shorten for a noisy-free lab,
    # lengthen when alerts flap on refresh gaps.
    idle_cost_for: str = "1h"
    team_gpus_idle_for: str = "2h"
    gpu_budget_for: str = "15m"
    gpu_budget_forecast_for: str = "1h"
    llm_budget_for: str = "5m"
    llm_budget_forecast_for: str = "30m"
    borrowing_for: str = "6h"
    preempted_for: str = "1h"
    waiting_for: str = "30m"
    unallocated_for: str = "1h"
    pricing_drift_for: str = "6h"
    gpu_price_difference_for: str = "6h"
    # Bills change by the hour and close a day at a time: a drift must last this long.
    bill_drift_for: str = "6h"
    cost_anomaly_for: str = "1h"
    source_down_for: str = "15m"
    source_stale_for: str = "5m"
    exporter_absent_for: str = "15m"
    failed_endpoints_for: str = "15m"
    # Longer than build_errors_window: only failures repeating within every window fire.
    build_errors_for: str = "20m"
    records_dropped_for: str = "30m"
    # Restarts and repairs are events: the `for` only waits out a scrape or two, and the
    # alert then stays for the window after the last event.
    worker_restarts_for: str = "5m"
    # No replica with a working refresh worker: longer than a restart or a reload takes.
    worker_down_for: str = "5m"
    reconcile_repairs_for: str = "5m"
    # Folding is a standing state, not an event: an hour rules out a passing burst of pods.
    teams_folded_for: str = "1h"

    # --- Dashboards ------------------------------------------------------------------------
    # Prefix of every dashboard uid (uids stay <= 40 characters). Change it only when two
    # copies of the mixin share one Grafana, since links and bookmarks use the uid.
    dashboard_uid_prefix: str = "chargeback-"
    # Tags on every dashboard; Grafana's dashboard links and search use them.
    dashboard_tags: tuple[str, ...] = ("chargeback",)
    # The title of each dashboard's dropdown of the others (every dashboard with those tags).
    dashboard_links_title: str = "Chargeback"
    # Auto-refresh. The exporter refreshes sources every minute or more, faster is wasted.
    dashboard_refresh: str = "5m"
    # Default time range; month-to-date panels read the last value, so 7 days shows the trend.
    dashboard_time_from: str = "now-7d"
    dashboard_time_to: str = "now"
    # Time zone of the dashboards; "browser" or an IANA zone such as "Europe/Madrid".
    dashboard_timezone: str = "utc"
    # Whether the dashboards' Prometheus holds several clusters (a central Prometheus, Thanos or
    # Mimir): only then is the `cluster` variable shown. Single-cluster boards hide it (Grafana's
    # variable `hide`, in every version the dashboards target) and it stays All.
    multi_cluster: bool = False

    # --- Runbooks --------------------------------------------------------------------------
    # Where docs/runbook.md is published; each alert links to `<base>#<lowercased alert name>`.
    # The default is the runbook the exporter serves itself, at the Service the shipped
    # deployment (deploy/kubernetes/service.yaml) gives it: always the version that runs.
    # Point it at a docs site when the people on call cannot reach the cluster's Services.
    runbook_base_url: str = "http://gpu-chargeback-exporter.monitoring.svc:10290/runbook"

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            is_duration = f.name.endswith(("_for", "_window"))
            if is_duration and not _DURATION.match(value):
                msg = f"{f.name}: {value!r} is not a Prometheus duration"
                raise ValueError(msg)
        for name in (self.cluster_label, *self.replica_labels):
            if not _LABEL.match(name):
                msg = f"{name!r} is not a Prometheus label name"
                raise ValueError(msg)
        if self.cluster_label in self.replica_labels:
            msg = f"replica_labels: {self.cluster_label!r} is the cluster label"
            raise ValueError(msg)
        if len(self.dashboard_uid_prefix) > 24:
            msg = "dashboard_uid_prefix: at most 24 characters, so uids stay <= 40"
            raise ValueError(msg)

    def sel(self, *matchers: str) -> str:
        """`{<selector>, <matchers>...}`: the exporter's series, narrowed by extra matchers."""
        return "{" + ", ".join(m for m in (self.selector, *matchers) if m) + "}"

    def dedup(self, metric: str, *matchers: str) -> str:
        """One copy of each series of `metric` however many replicas export it."""
        return f"max without ({', '.join(self.replica_labels)}) ({metric}{self.sel(*matchers)})"

    def by(self, *labels: str) -> str:
        """`by (<cluster label>, <labels>...)`: an aggregation that never merges clusters."""
        return f"by ({', '.join((self.cluster_label, *labels))})"

    def runbook(self, alert: str) -> str:
        """The runbook URL of one alert."""
        return f"{self.runbook_base_url}#{alert.lower()}"

    def with_short_for(self) -> MixinConfig:
        """The same knobs with every `for` set to SHORT_FOR (for the end-to-end test only)."""
        changes: dict[str, Any] = {
            f.name: SHORT_FOR for f in dataclasses.fields(self) if f.name.endswith("_for")
        }
        return dataclasses.replace(self, **changes)


DEFAULT = MixinConfig()


def _coerce(name: str, current: object, value: object) -> object:
    """Check a YAML value against the default's type; ints are fine where floats are."""
    if isinstance(current, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            msg = f"{name}: expected a list of strings"
            raise ValueError(msg)
        return tuple(value)
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not type(current):
        msg = f"{name}: expected {type(current).__name__}, got {type(value).__name__}"
        raise ValueError(msg)
    return value


def load_config(path: Path | None) -> MixinConfig:
    """Knobs from a YAML mapping of field names to values; unknown keys are errors."""
    if path is None:
        return DEFAULT
    raw: Any = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        msg = f"{path}: expected a mapping of knob names to values"
        raise ValueError(msg)
    known = {f.name for f in dataclasses.fields(MixinConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        msg = f"{path}: unknown knobs: {', '.join(map(str, unknown))}"
        raise ValueError(msg)
    changes: dict[str, Any] = {
        k: _coerce(f"{path}: {k}", getattr(DEFAULT, k), v) for k, v in raw.items()
    }
    return dataclasses.replace(DEFAULT, **changes)
