"""Recording rules (group `chargeback.rules`): per-team cost, idle, budget and forecast series.

Names follow Prometheus' `level:metric:operations`: the level names the labels the series
keeps (every series also keeps the cluster label, left out of the level unless it is the only
one), the metric is an exporter family unchanged (a ratio of two families is `<a>_per_<b>`; a
share of one family, split by a label such as `scope`, keeps the one name), and the operations
are listed newest first. A filter that the name cannot say becomes a label the rule sets
(`scope`, `kind`). tests/tooling/test_rule_names.py holds every name to this, and
chargeback_mixin/deprecated.py keeps the names of release 0.1 as aliases until 0.3.

The `team_kind:` series carry the same (team, kind) labels as chargeback_team_budget, so budget
ratios are plain one-to-one divisions:

- kind="gpu" sums every component but llm_external: the cluster's hardware as the team causes
  it, including llm_serving, so the team serving a self-hosted model is credited what its
  consumers are charged, and the consumers' tokens count against their hardware budget;
  kind="llm" is the llm_external component, the external providers' bill.
- The end-of-month forecast is the exporter's own (`chargeback_team_kind_cost_forecast_month_end`,
  bound mid: docs/forecast.md), the figure the report and the statement print. The month is the
  exporter's: it follows its configured time zone, which PromQL's calendar functions (UTC only)
  cannot know, so the exporter also exports the month's bounds as Unix times and the hours are
  plain differences (elapsed = time() - start, length = end - start, left = end - time()),
  right in any zone and across daylight-saving changes, for dashboards. Each cluster gets its
  own bounds (clusters may run in different zones).
- Idle per resource comes from the exporter's pre-policy `chargeback_cluster_*` families: the
  policies fold GPU, CPU and memory idle into one `idle_share` component, so only those tell
  idle GPUs apart.

Replica-safe and cluster-aware: every raw series is first reduced to one copy with
`max without (<replica labels>)` (two replicas of one exporter differ only in those labels and
export the same figures), and every aggregation groups by the cluster label. The same rules
then serve one exporter, an HA pair, and a central Prometheus, Thanos or Mimir holding many
clusters; where no series has a cluster label, the cluster is simply the empty one.
"""

from __future__ import annotations

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.month_to_date import (
    IDLE_GPU_COST_MTD,
    IDLE_GPU_SECONDS_MTD,
    month_to_date_rules,
)
from exporter.ledger.costs.components import Component

__all__ = [
    "BUDGET_FORECAST_RATIO",
    "BUDGET_USED_RATIO",
    "CLUSTER_SCOPE_COST",
    "CLUSTER_SCOPE_RATIO",
    "COST_DEPARTURE",
    "GROUP",
    "HARDWARE_COST",
    "HARDWARE_MATCHER",
    "HOURS_LEFT_IN_MONTH",
    "IDLE_COST",
    "IDLE_COST_RATIO",
    "IDLE_GPU_COST_MTD",
    "IDLE_GPU_RATIO",
    "IDLE_GPU_SECONDS_MTD",
    "IDLE_RESOURCE_RATIO",
    "LLM_BUDGET_FORECAST_RATIO",
    "LLM_BUDGET_RATIO",
    "LLM_COMPONENTS",
    "LLM_PRICE_DRIFT",
    "MONTH_FORECAST",
    "MONTH_HOURS_ELAPSED",
    "MONTH_HOURS_LENGTH",
    "QUOTA_BORROWED",
    "QUOTA_LENT",
    "UNALLOCATED_COST_RATIO",
    "Rule",
    "allocated_gpus",
    "borrowed_cost",
    "recorded_names",
    "recording_rules",
]

GROUP = "chargeback.rules"
Rule = dict[str, object]

LLM_COMPONENTS: tuple[str, ...] = ("llm_serving", "llm_external")
assert all(c in tuple(Component) for c in LLM_COMPONENTS)
HARDWARE_MATCHER = 'component!~"' + "|".join(LLM_COMPONENTS) + '"'
GPU_BUDGET_MATCHER = 'component!="llm_external"'

COST = "chargeback_team_cost_per_hour"
MTD = "chargeback_team_cost_month_to_date"
MONTH_START = "chargeback_month_start_timestamp_seconds"
MONTH_END = "chargeback_month_end_timestamp_seconds"
BUDGET = "chargeback_team_budget"

# The cluster's cost per hour by scope (a label the rules set): hardware (every component but
# the LLM ones), idle (the __idle__ row and every idle_share), and their shares.
CLUSTER_SCOPE_COST = f"cluster_scope:{COST}:sum"
HARDWARE_COST = f'{CLUSTER_SCOPE_COST}{{scope="hardware"}}'
IDLE_COST = f'{CLUSTER_SCOPE_COST}{{scope="idle"}}'
# Idle cost over hardware cost (scope="idle"); unallocated cost over all cost (scope="unallocated").
CLUSTER_SCOPE_RATIO = f"cluster_scope:{COST}:ratio"
IDLE_COST_RATIO = f'{CLUSTER_SCOPE_RATIO}{{scope="idle"}}'
UNALLOCATED_COST_RATIO = f'{CLUSTER_SCOPE_RATIO}{{scope="unallocated"}}'
# Idle cost per resource over that resource's cost, before any policy.
IDLE_RESOURCE_RATIO = (
    "cluster_resource:chargeback_cluster_idle_cost_per_hour"
    "_per_chargeback_cluster_resource_cost_per_hour:ratio"
)
# The idle GPU share the idle alert and panels read (GPUs only, never CPU or memory idle).
IDLE_GPU_RATIO = f'{IDLE_RESOURCE_RATIO}{{resource="gpu"}}'
# The exporter's month per cluster, in hours: its length, hours gone and hours left.
MONTH_HOURS_LENGTH = f"cluster:{MONTH_END}:hours_since_start"
MONTH_HOURS_ELAPSED = f"cluster:{MONTH_START}:hours_ago"
HOURS_LEFT_IN_MONTH = f"cluster:{MONTH_END}:hours_ahead"
# The month-end forecast of a team's cost, and it and the month to date over the budget.
MONTH_FORECAST = f"team_kind:{MTD}:forecast"
KIND_FORECAST = "chargeback_team_kind_cost_forecast_month_end"
MID = 'bound="mid"'
BUDGET_USED_RATIO = f"team_kind:{MTD}_per_{BUDGET}:ratio"
BUDGET_FORECAST_RATIO = f"team_kind:{MTD}_per_{BUDGET}:ratio_forecast"
# GPU quota a team borrows from or lends to its cohort (resource = the GPU resource).
QUOTA_BORROWED = "team_resource:chargeback_quota_borrowed:sum"
QUOTA_LENT = "team_resource:chargeback_quota_lent:sum"
# LiteLLM spend over max_budget, now and at the next reset if spend grows as it did.
LLM_BUDGET_RATIO = "team:chargeback_llm_budget_spend_per_chargeback_llm_budget_max:ratio"
LLM_BUDGET_FORECAST_RATIO = (
    "team:chargeback_llm_budget_spend_per_chargeback_llm_budget_max:ratio_forecast"
)
# A self-hosted model's declared price per token over its measured one.
LLM_PRICE_DRIFT = "model:chargeback_llm_cost_per_token:ratio"
# A bill's month so far: (billed - recorded) over billed, per bill source, provider and scope.
BILL_DRIFT = (
    "source_provider_scope_kind:chargeback_bill_difference_per_chargeback_bill_billed:ratio"
)
BILL_LABELS = ("source", "provider", "scope", "kind")

IDLE_TEAM = 'team="__idle__"'
IDLE_SHARE = 'component="idle_share"'
UNALLOCATED_TEAM = 'team="__unallocated__"'
ALLOCATED = 'state=~"busy|idle"'
BORROWED = 'component="borrowed"'
DECLARED = 'basis="declared"'
MEASURED = 'basis="measured"'

# A team's recent cost per hour against its own baseline, minus one (the anomaly alert's value).
COST_DEPARTURE = f"team:{COST}:relative_change"
# The resolution of the anomaly baseline's subquery.
BASELINE_STEP = "1h"
# Teams only: the reserved rows (__idle__, __unallocated__, __other__) are not anyone's spend.
TEAMS_ONLY = 'team!~"__.*"'


def _record(name: str, expr: str, labels: dict[str, str] | None = None) -> Rule:
    rule: Rule = {"record": name, "expr": expr}
    if labels:
        rule["labels"] = dict(labels)
    return rule


def _cost_rules(c: MixinConfig) -> list[Rule]:
    """Cost rates per team and component, in total, idle and unallocated."""
    return [
        _record(f"team_component:{COST}:sum", f"sum {c.by('team', 'component')} ({c.dedup(COST)})"),
        _record(f"team:{COST}:sum", f"sum {c.by('team')} ({c.dedup(COST)})"),
        _record(f"cluster:{COST}:sum", f"sum {c.by()} ({c.dedup(COST)})"),
        _record(
            CLUSTER_SCOPE_COST,
            f"sum {c.by()} ({c.dedup(COST, HARDWARE_MATCHER)})",
            {"scope": "hardware"},
        ),
        # `or` keeps one copy of a series matching both sides (an __idle__ idle_share), and the
        # fallback turns "no idle series" into 0 for every cluster whose exporter is there.
        _record(
            CLUSTER_SCOPE_COST,
            f"sum {c.by()} ({c.dedup(COST, IDLE_TEAM)} or {c.dedup(COST, IDLE_SHARE)})"
            f" or 0 * {_without_scope(HARDWARE_COST)}",
            {"scope": "idle"},
        ),
        _record(
            CLUSTER_SCOPE_RATIO,
            f"{_without_scope(IDLE_COST)} / ({_without_scope(HARDWARE_COST)} > 0)",
            {"scope": "idle"},
        ),
        _record(
            CLUSTER_SCOPE_RATIO,
            f"(sum {c.by()} ({c.dedup(COST, UNALLOCATED_TEAM)}) or 0 * cluster:{COST}:sum)"
            f" / (cluster:{COST}:sum > 0)",
            {"scope": "unallocated"},
        ),
    ]


def _without_scope(series: str) -> str:
    """A `cluster_scope:` series without its scope label, to divide or fall back across scopes."""
    return f"sum without (scope) ({series})"


def _anomaly_rules(c: MixinConfig) -> list[Rule]:
    """Each team's recent mean cost per hour over its baseline mean, minus one.

    Read from the per-cluster team sum, so replicas are folded and clusters kept apart; a
    baseline under the minimum gives no series, so no alert.
    """
    team = f"team:{COST}:sum{{{TEAMS_ONLY}}}"
    recent = f"avg_over_time({team}[{c.cost_anomaly_recent_window}])"
    # The baseline samples the series hourly (a subquery): a mean over days loses nothing by
    # it, and each evaluation reads 168 points for 7 days rather than 10,080 raw samples. The
    # steps fall on whole hours, so a series with no sample at a whole hour yet (a new team, a
    # Prometheus started this hour) has none: its last hour stands in, which departs from the
    # recent mean by almost nothing and so stays silent.
    sampled = f"avg_over_time({team}[{c.cost_anomaly_baseline_window}:{BASELINE_STEP}])"
    baseline = f"({sampled} or avg_over_time({team}[{BASELINE_STEP}]))"
    return [
        _record(
            COST_DEPARTURE,
            f"{recent} / ({baseline} > {c.cost_anomaly_min_cost_per_hour:g}) - 1",
        )
    ]


def _idle_rules(c: MixinConfig) -> list[Rule]:
    """Idle cost per resource (gpu, cpu, ram) before any policy, and its share of that resource."""
    idle = "chargeback_cluster_idle_cost_per_hour"
    total = "chargeback_cluster_resource_cost_per_hour"
    return [
        _record(f"cluster_resource:{idle}:sum", f"sum {c.by('resource')} ({c.dedup(idle)})"),
        _record(f"cluster_resource:{total}:sum", f"sum {c.by('resource')} ({c.dedup(total)})"),
        _record(
            IDLE_RESOURCE_RATIO,
            f"cluster_resource:{idle}:sum / (cluster_resource:{total}:sum > 0)",
        ),
        _record(
            "cluster_resource:chargeback_cluster_idle_cost_month_to_date:sum",
            f"sum {c.by('resource')} ({c.dedup('chargeback_cluster_idle_cost_month_to_date')})",
        ),
    ]


def _month_rules(c: MixinConfig) -> list[Rule]:
    """The exporter's month per cluster: its bounds, and hours elapsed, left and in total."""
    start = f"cluster:{MONTH_START}:max"
    end = f"cluster:{MONTH_END}:max"
    return [
        # Replicas agree except across the boundary itself, where max picks the newer month.
        _record(start, f"max {c.by()} ({c.dedup(MONTH_START)})"),
        _record(end, f"max {c.by()} ({c.dedup(MONTH_END)})"),
        _record(MONTH_HOURS_LENGTH, f"({end} - {start}) / 3600"),
        # Clamped: until the exporter's next join after the boundary its bounds are last
        # month's, and a forecast then is the month to date, never less.
        _record(MONTH_HOURS_ELAPSED, f"clamp_min(time() - {start}, 0) / 3600"),
        _record(HOURS_LEFT_IN_MONTH, f"clamp_min({end} - time(), 0) / 3600"),
    ]


def _budget_rules(c: MixinConfig) -> list[Rule]:
    """Month to date against budget, and the end-of-month forecast, per team and kind."""
    rules: list[Rule] = [
        _record(f"team_component:{MTD}:sum", f"sum {c.by('team', 'component')} ({c.dedup(MTD)})"),
        _record(f"team:{MTD}:sum", f"sum {c.by('team')} ({c.dedup(MTD)})"),
    ]
    kinds = {"gpu": GPU_BUDGET_MATCHER, "llm": 'component="llm_external"'}
    # The rate by kind is gone with the rate-based forecast: the exporter forecasts itself.
    for kind, matcher in kinds.items():
        rules.append(
            _record(
                f"team_kind:{MTD}:sum",
                f"sum {c.by('team')} ({c.dedup(MTD, matcher)})",
                {"kind": kind},
            )
        )
    rules += [
        # The exporter's own forecast (docs/forecast.md), the figure the report prints too.
        _record(
            MONTH_FORECAST,
            f"sum {c.by('team', 'kind')} ({c.dedup(KIND_FORECAST, MID)})",
        ),
        _record(f"team_kind:{BUDGET}:sum", f"sum {c.by('team', 'kind')} ({c.dedup(BUDGET)})"),
        _record(BUDGET_USED_RATIO, f"team_kind:{MTD}:sum / (team_kind:{BUDGET}:sum > 0)"),
        _record(BUDGET_FORECAST_RATIO, f"{MONTH_FORECAST} / (team_kind:{BUDGET}:sum > 0)"),
    ]
    return rules


def _gpu_rules(c: MixinConfig) -> list[Rule]:
    """GPUs by state, utilisation, waste (now and month to date), GPU quota borrowed and lent."""
    gpu = f'resource="{c.gpu_resource}"'
    return [
        _record(
            "team_state:chargeback_gpus:sum",
            f"sum {c.by('team', 'state')} ({c.dedup('chargeback_gpus')})",
        ),
        _record(
            "team:chargeback_team_gpu_utilization_ratio:avg",
            f"avg {c.by('team')} ({c.dedup('chargeback_team_gpu_utilization_ratio')})",
        ),
        _record(
            "team:chargeback_team_gpu_waste_cost_per_hour:sum",
            f"sum {c.by('team')} ({c.dedup('chargeback_team_gpu_waste_cost_per_hour')})",
        ),
        # Only with DCGM read through Prometheus: live scrapes have no month of history.
        _record(
            "team:chargeback_team_gpu_idle_seconds_month_to_date:sum",
            f"sum {c.by('team')} ({c.dedup('chargeback_team_gpu_idle_seconds_month_to_date')})",
        ),
        _record(
            "team:chargeback_team_gpu_waste_cost_month_to_date:sum",
            f"sum {c.by('team')} ({c.dedup('chargeback_team_gpu_waste_cost_month_to_date')})",
        ),
        *month_to_date_rules(c),
        _record(
            QUOTA_BORROWED,
            f"sum {c.by('team', 'resource')} ({c.dedup('chargeback_quota_borrowed', gpu)})",
        ),
        _record(
            QUOTA_LENT,
            f"sum {c.by('team', 'resource')} ({c.dedup('chargeback_quota_lent', gpu)})",
        ),
    ]


def allocated_gpus(c: MixinConfig) -> str:
    """GPUs a team's pods hold (busy or idle), per cluster and team: an expression, not a rule."""
    return f"sum {c.by('team')} (team_state:chargeback_gpus:sum{{{ALLOCATED}}})"


def borrowed_cost(c: MixinConfig) -> str:
    """A team's borrowed-quota cost per hour; 0 for a team with borrowed GPU quota but no cost yet.

    An expression over recorded series (team_component and team_resource), not a rule of its own.
    """
    return (
        f"sum {c.by('team')} (team_component:{COST}:sum{{{BORROWED}}})"
        f" or 0 * sum {c.by('team')} ({QUOTA_BORROWED})"
    )


def _llm_rules(c: MixinConfig) -> list[Rule]:
    """LiteLLM budget window use and forecast, and self-hosted pricing drift."""
    spend = c.dedup("chargeback_llm_budget_spend")
    team = c.by("team")
    cap = f"(sum {team} ({c.dedup('chargeback_llm_budget_max')}) > 0)"
    # deriv() needs each replica's own samples: merged replicas would zigzag between them.
    growth = (
        f"max without ({', '.join(c.replica_labels)}) "
        f"(deriv(chargeback_llm_budget_spend{c.sel()}[{c.llm_spend_rate_window}]))"
    )
    return [
        _record(
            "team:chargeback_llm_spend_month_to_date:sum",
            f"sum {team} ({c.dedup('chargeback_llm_spend_month_to_date')})",
        ),
        _record(LLM_BUDGET_RATIO, f"sum {team} ({spend}) / {cap}"),
        # Spend at the next LiteLLM reset if it grows as it did over the window; never below
        # what is spent already.
        _record(
            "team:chargeback_llm_budget_spend:forecast",
            f"sum {team} ({spend})"
            f" + clamp_min(sum {team} ({growth}), 0)"
            f" * clamp_min(max {team} "
            f"({c.dedup('chargeback_llm_budget_reset_timestamp_seconds')}) - time(), 0)",
        ),
        _record(LLM_BUDGET_FORECAST_RATIO, f"team:chargeback_llm_budget_spend:forecast / {cap}"),
        _record(
            LLM_PRICE_DRIFT,
            f"sum {c.by('model')} ({c.dedup('chargeback_llm_cost_per_token', DECLARED)})"
            f" / (sum {c.by('model')} "
            f"({c.dedup('chargeback_llm_cost_per_token', MEASURED)}) > 0)",
        ),
    ]


def recording_rules(c: MixinConfig) -> list[Rule]:
    """Every recording rule, in evaluation order (later rules read earlier ones)."""
    return (
        _cost_rules(c)
        + _anomaly_rules(c)
        + _idle_rules(c)
        + _month_rules(c)
        + _budget_rules(c)
        + _gpu_rules(c)
        + _llm_rules(c)
        + [_bill_rule(c)]
    )


def _bill_rule(c: MixinConfig) -> Rule:
    """How far each bill is from what was recorded over the month's billed days."""
    month = 'period="month"'
    by = c.by(*BILL_LABELS)
    return _record(
        BILL_DRIFT,
        f"sum {by} ({c.dedup('chargeback_bill_difference', month)})"
        f" / (sum {by} ({c.dedup('chargeback_bill_billed', month)}) > 0)",
    )


def recorded_names(c: MixinConfig) -> set[str]:
    """Names of every recorded series."""
    return {str(r["record"]) for r in recording_rules(c)}
