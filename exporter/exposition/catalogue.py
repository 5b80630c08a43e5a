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
    "GPU_PRICE_BUILD_PER_HOUR",
    "GPU_PRICE_BUILD_WATTS",
    "GPU_PRICE_PER_HOUR",
    "LABELLING_BACKLOG_COST_MONTH_TO_DATE",
    "LLM_BREAK_EVEN_RATIO",
    "LLM_BREAK_EVEN_UTILIZATION_RATIO",
    "LLM_BUDGET_MAX",
    "LLM_BUDGET_RESET_TIMESTAMP_SECONDS",
    "LLM_BUDGET_SOFT",
    "LLM_BUDGET_SPEND",
    "LLM_COMPLETION_WEIGHT",
    "LLM_COMPLETION_WEIGHT_FALLBACK",
    "LLM_COST_PER_MILLION_TOKENS",
    "LLM_COST_PER_TOKEN",
    "LLM_MONTH_EDGE_OFFSET_SECONDS",
    "LLM_RECOMMENDED_COST_PER_TOKEN",
    "LLM_REQUESTS_MONTH_TO_DATE",
    "LLM_SECONDS_PER_TOKEN",
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
    "TEAM_GPU_CO2E_GRAMS_PER_HOUR",
    "TEAM_GPU_ENERGY_COST_PER_HOUR",
    "TEAM_GPU_ENERGY_KWH_PER_HOUR",
    "TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE",
    "TEAM_GPU_POWER_WATTS",
    "TEAM_GPU_UTILIZATION_RATIO",
    "TEAM_GPU_WASTE_COST_MONTH_TO_DATE",
    "TEAM_GPU_WASTE_COST_PER_HOUR",
    "TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE",
    "TEAM_LLM_COST_PER_MILLION_TOKENS",
    "TEAM_LLM_COST_PER_REQUEST",
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
LABELLING_BACKLOG_COST_MONTH_TO_DATE = _f(
    "labelling_backlog_cost_month_to_date",
    G,
    "Month-to-date cost of the largest unallocated (kind unallocated) and fallback-placed (kind "
    "fallback) workloads, before any idle policy; 20 per kind, the rest in one __other__ row.",
    ("kind", "namespace", "workload", "team", "key"),
    "currency",
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
# LLM completion weights, measured from vLLM (docs/llm.md).
LLM_COMPLETION_WEIGHT = _f(
    "llm_completion_weight",
    G,
    "Completion weight w of a self-hosted model in prompt + w x completion: as configured, as "
    "measured from vLLM's decode and prefill time, and the one applied.",
    ("model", "basis"),
    "ratio",
    "vllm",
)
LLM_SECONDS_PER_TOKEN = _f(
    "llm_seconds_per_token",
    G,
    "vLLM request time per token of a self-hosted model over the span read: prefill seconds per "
    "prompt token, decode seconds per completion token.",
    ("model", "phase"),
    "seconds",
    "vllm",
)
LLM_COMPLETION_WEIGHT_FALLBACK = _f(
    "llm_completion_weight_fallback",
    G,
    "1 when a model asks for its measured weight but the configured one is applied, by reason.",
    ("model", "reason"),
    "",
    "vllm",
)
# Unit economics: the GPU prices applied and built, energy, cost per token, build or buy.
GPU_PRICE_PER_HOUR = _f(
    "gpu_price_per_hour",
    G,
    "GPU-hour price applied per GPU model (kind=model) and Kueue flavor (kind=flavor), and where "
    "it came from: config (gpu_prices, gpu_flavor_prices), price_build, opencost_charge (what "
    "OpenCost charged on its nodes), opencost_assets, config_models (its nodes' configured model "
    "prices) or cluster_average (the blended price, when nothing else prices it).",
    ("kind", "name", "source"),
    "currency/h",
    "opencost",
)
GPU_PRICE_BUILD_PER_HOUR = _f(
    "gpu_price_build_per_hour",
    G,
    "A built GPU price's parts, per node and hour: capex (over the available hours of its "
    "amortisation), energy (GPUs x watts x PUE x tariff) and operations; their sum over "
    "gpus_per_node is the GPU-hour price.",
    ("kind", "name", "part"),
    "currency/h",
    "exporter",
)
GPU_PRICE_BUILD_WATTS = _f(
    "gpu_price_build_watts",
    G,
    "Power per GPU a built price used: nameplate (gpu_watts) or measured (dcgm-exporter's mean "
    "DCGM_FI_DEV_POWER_USAGE over that model's or flavor's GPUs).",
    ("kind", "name", "power"),
    "watts",
    "dcgm",
)
TEAM_GPU_POWER_WATTS = _f(
    "team_gpu_power_watts",
    G,
    "Measured power draw of the GPUs a team holds (DCGM_FI_DEV_POWER_USAGE; a shared GPU split "
    "as its count is).",
    ("team",),
    "watts",
    "dcgm",
)
TEAM_GPU_ENERGY_KWH_PER_HOUR = _f(
    "team_gpu_energy_kwh_per_hour",
    G,
    "Energy rate of the team's GPUs at the wall: measured kW x the PUE of their model's price "
    "build (1 without one).",
    ("team",),
    "kWh/h",
    "dcgm",
)
TEAM_GPU_ENERGY_COST_PER_HOUR = _f(
    "team_gpu_energy_cost_per_hour",
    G,
    "Energy cost rate of the team's GPUs: their kWh per hour at their model's price-build "
    "tariff. Absent for a team holding a GPU model no price build gives a tariff.",
    ("team",),
    "currency/h",
    "dcgm",
)
TEAM_GPU_CO2E_GRAMS_PER_HOUR = _f(
    "team_gpu_co2e_grams_per_hour",
    G,
    "Emissions rate of the team's GPUs: kWh per hour x grid_co2e_grams_per_kwh. Absent without it.",
    ("team",),
    "grams/h",
    "dcgm",
)
LLM_COST_PER_MILLION_TOKENS = _f(
    "llm_cost_per_million_tokens",
    G,
    "Cost per million tokens (prompt plus completion) of a model, month to date: declared "
    "(LiteLLM spend over tokens) and, for a self-hosted model, measured (its share of the "
    "serving cost over its tokens).",
    ("model", "basis"),
    "currency",
    "litellm",
)
TEAM_LLM_COST_PER_MILLION_TOKENS = _f(
    "team_llm_cost_per_million_tokens",
    G,
    "What a team paid per million tokens of a model, month to date: its external spend, or its "
    "re-attributed share of the serving cost, over its tokens.",
    ("team", "model"),
    "currency",
    "litellm",
)
TEAM_LLM_COST_PER_REQUEST = _f(
    "team_llm_cost_per_request",
    G,
    "What a team paid per request to a model, month to date (the same cost over its requests).",
    ("team", "model"),
    "currency",
    "litellm",
)
TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE = _f(
    "team_llm_alternative_cost_month_to_date",
    G,
    "What a team's tokens to a self-hosted model would have cost at the model's declared "
    "alternative (llm_models[].alternative), month to date.",
    ("team", "model"),
    "currency",
    "litellm",
)
LLM_BREAK_EVEN_RATIO = _f(
    "llm_break_even_ratio",
    G,
    "A self-hosted model's serving cost over what its tokens would cost at its alternative, "
    "month to date: the multiple of today's token volume at which self-hosting costs the "
    "same per token; below 1 self-hosting is already cheaper.",
    ("model",),
    "ratio",
    "litellm",
)
LLM_BREAK_EVEN_UTILIZATION_RATIO = _f(
    "llm_break_even_utilization_ratio",
    G,
    "GPU utilisation of the serving namespace at which self-hosting breaks even with the "
    "alternative: its measured utilisation x llm_break_even_ratio (above 1: not reachable).",
    ("model",),
    "ratio",
    "dcgm",
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
    LABELLING_BACKLOG_COST_MONTH_TO_DATE,
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
    LLM_COMPLETION_WEIGHT,
    LLM_SECONDS_PER_TOKEN,
    LLM_COMPLETION_WEIGHT_FALLBACK,
    GPU_PRICE_PER_HOUR,
    GPU_PRICE_BUILD_PER_HOUR,
    GPU_PRICE_BUILD_WATTS,
    TEAM_GPU_POWER_WATTS,
    TEAM_GPU_ENERGY_KWH_PER_HOUR,
    TEAM_GPU_ENERGY_COST_PER_HOUR,
    TEAM_GPU_CO2E_GRAMS_PER_HOUR,
    LLM_COST_PER_MILLION_TOKENS,
    TEAM_LLM_COST_PER_MILLION_TOKENS,
    TEAM_LLM_COST_PER_REQUEST,
    TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE,
    LLM_BREAK_EVEN_RATIO,
    LLM_BREAK_EVEN_UTILIZATION_RATIO,
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
