"""Month-to-date idle GPU time and cost integrated from the GPU states the exporter serves now."""

from __future__ import annotations

from chargeback_mixin.config import MixinConfig

__all__ = ["IDLE_GPU_COST_MTD", "IDLE_GPU_SECONDS_MTD", "MONTH_STEP_SECONDS", "month_to_date_rules"]

Rule = dict[str, object]
MONTH_START = "chargeback_month_start_timestamp_seconds"

# Idle GPU time and idle GPU cost over the exporter's month so far, from the exporter's own
# GPU states (the panels' fallback when DCGM is read directly and has no month of history).
IDLE_GPU_SECONDS_MTD = 'team_state:chargeback_gpus:month_to_date{state="idle"}'
IDLE_GPU_COST_MTD = "team:chargeback_team_gpu_waste_cost_per_hour:month_to_date"
# The step of the month-to-date subqueries: a month is at most 1,488 steps of 30 minutes, each
# read as the half hour up to it. Finer steps load more samples than promtool's test engine
# allows (10,000); a monthly figure sampled every half hour is within a half hour per change.
MONTH_STEP_SECONDS = 1800


def _so_far(c: MixinConfig, series: str, scale: int) -> str:
    """`series` summed over the exporter's month so far, x the step's length in `scale` units.

    The subquery reaches 31 days back; each step counts only once the month had started, by
    this evaluation's month start (`@ end()`: the rule's own time, however far back the step),
    so last month's steps count for nothing, in any time zone the exporter keeps its month in.
    """
    start = f"cluster:{MONTH_START}:max @ end()"
    # Each step stands for the step's length up to it, so the step at the start counts nothing.
    began = f"on ({c.cluster_label}) group_left () ({start} < bool time())"
    per_step = f"{MONTH_STEP_SECONDS}" if scale == 1 else f"{MONTH_STEP_SECONDS} / {scale:g}"
    return f"sum_over_time(({series} * {began})[31d:{MONTH_STEP_SECONDS}s]) * {per_step}"


def month_to_date_rules(c: MixinConfig) -> list[Rule]:
    """Idle GPU-seconds and idle GPU cost this month from the GPU states the exporter serves now.

    With DCGM read through Prometheus the exporter serves both figures from DCGM's own history
    (chargeback_team_gpu_idle_seconds_month_to_date, _waste_cost_month_to_date); read directly,
    it has no history, and these integrate what it served each step instead, as far back as
    Prometheus keeps it.
    """
    idle = 'team_state:chargeback_gpus:sum{state="idle"}'
    waste = "team:chargeback_team_gpu_waste_cost_per_hour:sum"
    return [
        {"record": "team_state:chargeback_gpus:month_to_date", "expr": _so_far(c, idle, 1)},
        {"record": IDLE_GPU_COST_MTD, "expr": _so_far(c, waste, 3600)},
    ]
