"""The metric catalogue: every family the exporter serves, declared once as data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "ATTRIBUTION_FALLBACK_COST_PER_HOUR",
    "BUILD",
    "BUILD_ERRORS",
    "CATALOGUE",
    "CLUSTER_COST_PER_HOUR",
    "CLUSTER_IDLE_COST_MONTH_TO_DATE",
    "CLUSTER_IDLE_COST_PER_HOUR",
    "CLUSTER_RESOURCE_COST_PER_HOUR",
    "COMPONENTS",
    "CONFIG",
    "DIMENSION_COST_MONTH_TO_DATE",
    "DIMENSION_COST_PER_HOUR",
    "DIMENSION_VALUES_OVER_CAP",
    "GPUS",
    "LLM_BUDGET_MAX",
    "LLM_BUDGET_RESET_TIMESTAMP_SECONDS",
    "LLM_BUDGET_SOFT",
    "LLM_BUDGET_SPEND",
    "LLM_COST_PER_TOKEN",
    "LLM_MONTH_EDGE_OFFSET_SECONDS",
    "LLM_RECOMMENDED_COST_PER_TOKEN",
    "LLM_REQUESTS_MONTH_TO_DATE",
    "LLM_SPEND_MONTH_TO_DATE",
    "LLM_TOKENS_MONTH_TO_DATE",
    "LLM_UNKNOWN_MODELS",
    "MONTH_END_TIMESTAMP_SECONDS",
    "MONTH_START_TIMESTAMP_SECONDS",
    "QUOTA_BORROWED",
    "QUOTA_BORROWING_LIMIT",
    "QUOTA_LENDING_LIMIT",
    "QUOTA_LENT",
    "QUOTA_NOMINAL",
    "QUOTA_USAGE",
    "SOURCE_BACKOFF_SECONDS",
    "SOURCE_DURATION_SECONDS",
    "SOURCE_ENDPOINTS",
    "SOURCE_ERRORS",
    "SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS",
    "SOURCE_RECONCILE_REPAIRS",
    "SOURCE_RECORDS_DROPPED",
    "SOURCE_UP",
    "TEAMS_OVER_CAP",
    "TEAM_BUDGET",
    "TEAM_COST_MONTH_TO_DATE",
    "TEAM_COST_PER_HOUR",
    "TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE",
    "TEAM_GPU_UTILIZATION_RATIO",
    "TEAM_GPU_WASTE_COST_MONTH_TO_DATE",
    "TEAM_GPU_WASTE_COST_PER_HOUR",
    "WORKER_RESTARTS",
    "WORKER_UP",
    "Family",
    "Kind",
    "markdown_table",
]

PREFIX = "chargeback_"
BACKGROUND_NOTE = " Refreshed in the background, not at scrape time."

# Cost components, in the order the report prints them.
COMPONENTS: tuple[str, ...] = (
    "gpu",
    "cpu",
    "ram",
    "storage",
    "network",
    "other",
    "idle_share",
    "borrowed",
    "lent",
    "shared",
    "llm_serving",
    "llm_external",
)


class Kind(StrEnum):
    """Prometheus metric type of a family."""

    GAUGE = "gauge"
    COUNTER = "counter"
    INFO = "info"


@dataclass(frozen=True)
class Family:
    """One metric family: its exposed name, type, help, label names, unit and source."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...]
    unit: str
    source: str  # which upstream feeds it; "exporter" for self-metrics

    @property
    def base(self) -> str:
        """The name without the `chargeback_` prefix."""
        return self.name.removeprefix(PREFIX)

    @property
    def exposed_name(self) -> str:
        """The name as it appears in the exposition (counters gain `_total`, info `_info`)."""
        if self.kind is Kind.COUNTER:
            return f"{self.name}_total"
        if self.kind is Kind.INFO:
            return f"{self.name}_info"
        return self.name


def _f(
    name: str, kind: Kind, help_: str, labels: tuple[str, ...], unit: str, source: str
) -> Family:
    return Family(PREFIX + name, kind, help_, labels, unit, source)


G, C, INFO = Kind.GAUGE, Kind.COUNTER, Kind.INFO
QUOTA_LABELS = ("team", "cluster_queue", "cohort", "flavor", "resource")

# Cost, from OpenCost joined with Kueue and LiteLLM.
TEAM_COST_PER_HOUR = _f(
    "team_cost_per_hour",
    G,
    "Current cost rate per team and component, in the configured currency per hour.",
    ("team", "component"),
    "currency/h",
    "opencost",
)
TEAM_COST_MONTH_TO_DATE = _f(
    "team_cost_month_to_date",
    G,
    "Cost per team and component since the start of the calendar month in the configured time "
    "zone, in the configured currency.",
    ("team", "component"),
    "currency",
    "opencost",
)
TEAM_BUDGET = _f(
    "team_budget",
    G,
    "Monthly budget per team and kind (gpu, llm), in the configured currency.",
    ("team", "kind"),
    "currency",
    "config",
)
ATTRIBUTION_FALLBACK_COST_PER_HOUR = _f(
    "attribution_fallback_cost_per_hour",
    G,
    "Cost rate placed on a team only through a fallback label key, per team and key.",
    ("team", "key"),
    "currency/h",
    "opencost",
)
CLUSTER_COST_PER_HOUR = _f(
    "cluster_cost_per_hour",
    G,
    "Cost rate of the whole cluster (allocations plus idle) as OpenCost reports it, before any "
    "policy.",
    (),
    "currency/h",
    "opencost",
)
CLUSTER_RESOURCE_COST_PER_HOUR = _f(
    "cluster_resource_cost_per_hour",
    G,
    "Cost rate of the whole cluster per resource (gpu, cpu, ram): allocations plus idle, as "
    "OpenCost reports it, before any policy.",
    ("resource",),
    "currency/h",
    "opencost",
)
CLUSTER_IDLE_COST_PER_HOUR = _f(
    "cluster_idle_cost_per_hour",
    G,
    "Cost rate of idle capacity per resource (gpu, cpu, ram), as OpenCost reports it, before "
    "any idle policy shares it out.",
    ("resource",),
    "currency/h",
    "opencost",
)
CLUSTER_IDLE_COST_MONTH_TO_DATE = _f(
    "cluster_idle_cost_month_to_date",
    G,
    "Cost of idle capacity per resource (gpu, cpu, ram) since the start of the calendar month "
    "in the configured time zone, before any idle policy shares it out.",
    ("resource",),
    "currency",
    "opencost",
)
TEAMS_OVER_CAP = _f(
    "teams_over_cap",
    G,
    "Distinct teams beyond attribution.max_teams whose cost was folded into __other__.",
    (),
    "teams",
    "opencost",
)
# Dimensions beyond the team (config `dimensions`), each summing to the same cluster total.
DIMENSION_COST_PER_HOUR = _f(
    "dimension_cost_per_hour",
    G,
    "Current cost rate per configured dimension, value and component, in the configured "
    "currency per hour; each dimension sums to the team split's total.",
    ("dimension", "value", "component"),
    "currency/h",
    "opencost",
)
DIMENSION_COST_MONTH_TO_DATE = _f(
    "dimension_cost_month_to_date",
    G,
    "Cost per configured dimension, value and component since the start of the calendar "
    "month, in the configured currency.",
    ("dimension", "value", "component"),
    "currency",
    "opencost",
)
DIMENSION_VALUES_OVER_CAP = _f(
    "dimension_values_over_cap",
    G,
    "Distinct values of a dimension beyond its max_values whose cost was folded into __other__.",
    ("dimension",),
    "values",
    "opencost",
)
# The month the month-to-date totals cover, so rules can forecast in the configured zone.
MONTH_START_TIMESTAMP_SECONDS = _f(
    "month_start_timestamp_seconds",
    G,
    "Unix time of the start of the current calendar month in the configured time zone.",
    (),
    "seconds",
    "config",
)
MONTH_END_TIMESTAMP_SECONDS = _f(
    "month_end_timestamp_seconds",
    G,
    "Unix time of the start of the next calendar month in the configured time zone (the end "
    "of the current one).",
    (),
    "seconds",
    "config",
)
# GPUs, from DCGM.
GPUS = _f(
    "gpus",
    G,
    "GPUs per team and state: busy, idle (allocated but below the utilisation threshold) or "
    "unallocated (no pod). MIG slices count as their share of a GPU.",
    ("team", "state"),
    "gpus",
    "dcgm",
)
TEAM_GPU_UTILIZATION_RATIO = _f(
    "team_gpu_utilization_ratio",
    G,
    "Mean DCGM utilisation (0..1) of the team's GPUs.",
    ("team",),
    "ratio",
    "dcgm",
)
TEAM_GPU_WASTE_COST_PER_HOUR = _f(
    "team_gpu_waste_cost_per_hour",
    G,
    "Cost rate of GPUs a team holds but leaves idle.",
    ("team",),
    "currency/h",
    "dcgm",
)
TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE = _f(
    "team_gpu_idle_hours_month_to_date",
    G,
    "GPU-hours the team's pods held GPUs below the idle threshold since the start of the "
    "calendar month (MIG slices as their share, time-sliced GPUs split among their pods). Only "
    "with sources.dcgm.prometheus: listed urls and discovery have no history, so it is absent.",
    ("team",),
    "gpu-hours",
    "dcgm",
)
TEAM_GPU_WASTE_COST_MONTH_TO_DATE = _f(
    "team_gpu_waste_cost_month_to_date",
    G,
    "Cost of the month's idle GPU-hours: each at its GPU model's current GPU-hour price. Absent "
    "without sources.dcgm.prometheus, and for a team with an idle GPU model nothing prices.",
    ("team",),
    "currency",
    "dcgm",
)
# Quota, from Kueue.
QUOTA_NOMINAL = _f(
    "quota_nominal",
    G,
    "Kueue nominal quota (GPUs as counts, CPU in cores, memory in bytes).",
    QUOTA_LABELS,
    "native",
    "kueue",
)
QUOTA_USAGE = _f(
    "quota_usage",
    G,
    "Kueue quota in use by admitted workloads.",
    QUOTA_LABELS,
    "native",
    "kueue",
)
QUOTA_BORROWED = _f(
    "quota_borrowed",
    G,
    "Quota a ClusterQueue borrows from its cohort (Kueue status).",
    QUOTA_LABELS,
    "native",
    "kueue",
)
QUOTA_LENT = _f(
    "quota_lent",
    G,
    "Quota of a ClusterQueue that others in its cohort use, as apportioned by the exporter.",
    QUOTA_LABELS,
    "native",
    "kueue",
)
QUOTA_BORROWING_LIMIT = _f(
    "quota_borrowing_limit",
    G,
    "Kueue borrowing limit; +Inf when unset.",
    QUOTA_LABELS,
    "native",
    "kueue",
)
QUOTA_LENDING_LIMIT = _f(
    "quota_lending_limit",
    G,
    "Kueue lending limit; +Inf when unset.",
    QUOTA_LABELS,
    "native",
    "kueue",
)
# LLM, from LiteLLM.
LLM_SPEND_MONTH_TO_DATE = _f(
    "llm_spend_month_to_date",
    G,
    "LiteLLM spend this calendar month per team and model, as LiteLLM prices it.",
    ("team", "model"),
    "currency",
    "litellm",
)
LLM_TOKENS_MONTH_TO_DATE = _f(
    "llm_tokens_month_to_date",
    G,
    "LiteLLM tokens this calendar month per team, model and direction.",
    ("team", "model", "direction"),
    "tokens",
    "litellm",
)
LLM_REQUESTS_MONTH_TO_DATE = _f(
    "llm_requests_month_to_date",
    G,
    "LiteLLM requests this calendar month per team and model.",
    ("team", "model"),
    "requests",
    "litellm",
)
LLM_BUDGET_SPEND = _f(
    "llm_budget_spend",
    G,
    "LiteLLM team spend in the current budget window (LiteLLM resets it on its own schedule).",
    ("team",),
    "currency",
    "litellm",
)
LLM_BUDGET_MAX = _f(
    "llm_budget_max",
    G,
    "LiteLLM team max_budget (hard cap).",
    ("team",),
    "currency",
    "litellm",
)
LLM_BUDGET_SOFT = _f(
    "llm_budget_soft",
    G,
    "LiteLLM team soft_budget (alert only).",
    ("team",),
    "currency",
    "litellm",
)
LLM_BUDGET_RESET_TIMESTAMP_SECONDS = _f(
    "llm_budget_reset_timestamp_seconds",
    G,
    "Next LiteLLM budget reset of the team.",
    ("team",),
    "seconds",
    "litellm",
)
LLM_COST_PER_TOKEN = _f(
    "llm_cost_per_token",
    G,
    "Cost per weighted token of a self-hosted model: as LiteLLM declares it, and as measured from "
    "its serving cost.",
    ("model", "basis"),
    "currency",
    "litellm",
)
LLM_RECOMMENDED_COST_PER_TOKEN = _f(
    "llm_recommended_cost_per_token",
    G,
    "Recommended LiteLLM input_cost_per_token and output_cost_per_token for a self-hosted model.",
    ("model", "direction"),
    "currency",
    "litellm",
)
LLM_UNKNOWN_MODELS = _f(
    "llm_unknown_models",
    G,
    "Models seen in LiteLLM that the config does not declare (treated as external).",
    (),
    "models",
    "litellm",
)
LLM_MONTH_EDGE_OFFSET_SECONDS = _f(
    "llm_month_edge_offset_seconds",
    G,
    "Offset of the configured time zone from UTC at the start of this month (east positive): "
    "LiteLLM cuts its daily rows at UTC midnight, so at each month edge up to this much LLM "
    "usage time is counted in the neighbouring month.",
    (),
    "seconds",
    "litellm",
)
# Health of the exporter and its sources.
SOURCE_UP = _f(
    "source_up",
    G,
    "1 if the last refresh of the source succeeded, else 0.",
    ("source",),
    "",
    "exporter",
)
SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS = _f(
    "source_last_success_timestamp_seconds",
    G,
    "Unix time of the source's last successful refresh.",
    ("source",),
    "seconds",
    "exporter",
)
SOURCE_DURATION_SECONDS = _f(
    "source_duration_seconds",
    G,
    "Duration of the source's last refresh.",
    ("source",),
    "seconds",
    "exporter",
)
SOURCE_BACKOFF_SECONDS = _f(
    "source_backoff_seconds",
    G,
    "How long the source's upstream asked the exporter to wait (Retry-After, honoured up to 10 "
    "minutes) after its last refresh failed; the next refresh waits that long. 0 otherwise.",
    ("source",),
    "seconds",
    "exporter",
)
SOURCE_ERRORS = _f(
    "source_errors",
    C,
    "Failed refreshes of a source, by reason.",
    ("source", "reason"),
    "",
    "exporter",
)
SOURCE_RECORDS_DROPPED = _f(
    "source_records_dropped",
    C,
    "Upstream records (one allocation, GPU, ClusterQueue resource or LiteLLM row) and DCGM "
    "utilisation samples dropped by validation, by reason. A read that drops a record is "
    "refused and the source marked down; a dropped sample leaves its GPU counted.",
    ("source", "reason"),
    "",
    "exporter",
)
SOURCE_ENDPOINTS = _f(
    "source_endpoints",
    G,
    "Endpoints a discovering source found in its last accepted refresh, by state: scraped, "
    "failed (not read, so their GPUs are missing from the GPU families) or not_ready (skipped "
    "as their EndpointSlice says).",
    ("source", "state"),
    "endpoints",
    "dcgm",
)
SOURCE_RECONCILE_REPAIRS = _f(
    "source_reconcile_repairs",
    C,
    "Kept records of closed days (OpenCost: one allocation, or idle of one resource; LiteLLM: "
    "one day) that a periodic re-read found changed upstream and corrected; only for sources "
    "that keep closed days.",
    ("source",),
    "",
    "exporter",
)
BUILD_ERRORS = _f(
    "build_errors",
    C,
    "Failed joins and renders of the exposition, by stage; the last good values keep serving.",
    ("stage",),
    "",
    "exporter",
)
WORKER_RESTARTS = _f(
    "worker_restarts",
    C,
    "Times the refresh worker process died and was started again; scrapes kept the last values.",
    (),
    "",
    "exporter",
)
WORKER_UP = _f(
    "worker_up",
    G,
    "1 while the refresh worker runs and its figures are fresh; 0 when it cannot start or has "
    "sent no figures within the shortest max_staleness (then no source figures are served).",
    (),
    "",
    "exporter",
)
BUILD = _f(
    "build",
    INFO,
    "Build information of the exporter.",
    ("version",),
    "",
    "exporter",
)
CONFIG = _f(
    "config",
    INFO,
    "Effective configuration of the exporter.",
    ("currency", "idle_policy"),
    "",
    "exporter",
)

# Every family, in exposition order: the docs/metrics.md table, the rules lint and the dashboards
# lint read this tuple.
CATALOGUE: tuple[Family, ...] = (
    TEAM_COST_PER_HOUR,
    TEAM_COST_MONTH_TO_DATE,
    TEAM_BUDGET,
    ATTRIBUTION_FALLBACK_COST_PER_HOUR,
    CLUSTER_COST_PER_HOUR,
    CLUSTER_RESOURCE_COST_PER_HOUR,
    CLUSTER_IDLE_COST_PER_HOUR,
    CLUSTER_IDLE_COST_MONTH_TO_DATE,
    TEAMS_OVER_CAP,
    DIMENSION_COST_PER_HOUR,
    DIMENSION_COST_MONTH_TO_DATE,
    DIMENSION_VALUES_OVER_CAP,
    MONTH_START_TIMESTAMP_SECONDS,
    MONTH_END_TIMESTAMP_SECONDS,
    GPUS,
    TEAM_GPU_UTILIZATION_RATIO,
    TEAM_GPU_WASTE_COST_PER_HOUR,
    TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE,
    TEAM_GPU_WASTE_COST_MONTH_TO_DATE,
    QUOTA_NOMINAL,
    QUOTA_USAGE,
    QUOTA_BORROWED,
    QUOTA_LENT,
    QUOTA_BORROWING_LIMIT,
    QUOTA_LENDING_LIMIT,
    LLM_SPEND_MONTH_TO_DATE,
    LLM_TOKENS_MONTH_TO_DATE,
    LLM_REQUESTS_MONTH_TO_DATE,
    LLM_BUDGET_SPEND,
    LLM_BUDGET_MAX,
    LLM_BUDGET_SOFT,
    LLM_BUDGET_RESET_TIMESTAMP_SECONDS,
    LLM_COST_PER_TOKEN,
    LLM_RECOMMENDED_COST_PER_TOKEN,
    LLM_UNKNOWN_MODELS,
    LLM_MONTH_EDGE_OFFSET_SECONDS,
    SOURCE_UP,
    SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS,
    SOURCE_DURATION_SECONDS,
    SOURCE_BACKOFF_SECONDS,
    SOURCE_ERRORS,
    SOURCE_RECORDS_DROPPED,
    SOURCE_ENDPOINTS,
    SOURCE_RECONCILE_REPAIRS,
    BUILD_ERRORS,
    WORKER_RESTARTS,
    WORKER_UP,
    BUILD,
    CONFIG,
)


def markdown_table() -> str:
    """The catalogue as the metric table of docs/metrics.md (a test keeps the page in step)."""
    rows = ["| metric | type | labels | unit | source | meaning |", "|---|---|---|---|---|---|"]
    for fam in CATALOGUE:
        labels = ", ".join(fam.labels) or "-"
        unit = fam.unit or "-"
        rows.append(
            f"| `{fam.exposed_name}` | {fam.kind.value} | {labels} | {unit} | {fam.source} "
            f"| {fam.help} |"
        )
    return "\n".join(rows) + "\n"
