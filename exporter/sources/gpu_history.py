"""A month's GPU operation per team, read back from the exporter's own series in Prometheus.

DCGM read directly (listed urls, discovery) keeps no history, and a closed month's DCGM state is
the state when the report runs. The exporter publishes each team's GPUs by state, their mean
utilisation, energy and emissions rates, and each self-hosted model's break-even figures (the
caller names the families, as the catalogue does); with `report.prometheus` set the report
reads them back over the period, one instant query each at the period's end, the exporter's
replicas folded first (`max without (instance, pod, prometheus_replica)`):

- idle GPU-hours: `sum_over_time(<gpus{state="idle"}>[<period>s:60s]) / 60`, GPU-minutes
  observed over 60;
- energy (kWh) and CO2e (grams): the same sum of the per-hour rates over 60;
- utilisation: `avg_over_time(<utilisation>[<period>s:60s])`, the mean of the minutes observed;
- a self-hosted model's serving utilisation, for build or buy: the mean over the minutes of its
  break-even utilisation over its break-even ratio (the one is the other times the utilisation).

Minutes with no sample (the exporter down) count nothing: the figures are what was observed,
never extrapolated. A sample that is NaN, infinite or negative, or lacks its team or model,
refuses the read, as do series of several `cluster` values without a selector.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta

from exporter.config.schema import ReportPrometheus
from exporter.errors import UpstreamPayloadError
from exporter.sources.gpu_history_records import GpuMonth, GpuSeries, TeamGpuMonth
from exporter.sources.prometheus_api import instant_vector
from exporter.sources.report_prometheus import SOURCE, open_client, require_one_cluster

__all__ = ["gpu_history", "gpu_queries"]

STEP = 60  # seconds
_REPLICAS = "instance, pod, prometheus_replica"


def gpu_queries(
    cfg: ReportPrometheus, span: tuple[datetime, datetime], s: GpuSeries
) -> dict[str, str]:
    """The PromQL of each figure over `span` = [start, end), by field."""
    cluster = f"cluster={json.dumps(cfg.cluster)}" if cfg.cluster else ""
    seconds = round(span[1].timestamp() - span[0].timestamp())

    def folded(metric: str, *matchers: str) -> str:
        selector = ", ".join(m for m in (*matchers, cluster) if m)
        return f"max without ({_REPLICAS}) ({metric}{{{selector}}})"

    def over(fn: str, inner: str) -> str:
        return f"{fn}(({inner})[{seconds}s:{STEP}s])"

    per_minute = f" / {3600 // STEP}"
    return {
        "idle_gpu_hours": over("sum_over_time", folded(s.gpus, 'state="idle"')) + per_minute,
        "utilisation": over("avg_over_time", folded(s.utilisation)),
        "kwh": over("sum_over_time", folded(s.kwh_per_hour)) + per_minute,
        "co2e_grams": over("sum_over_time", folded(s.co2e_per_hour)) + per_minute,
        "serving": over(
            "avg_over_time",
            f"{folded(s.break_even_utilisation)} / {folded(s.break_even_ratio)}",
        ),
    }


def gpu_history(
    cfg: ReportPrometheus, config_path: str, span: tuple[datetime, datetime], series: GpuSeries
) -> GpuMonth:
    """Each team's GPU operation over `span`; UpstreamError when it cannot be read or trusted."""
    at = span[1] - timedelta(milliseconds=1)
    found: dict[str, dict[str, float]] = {}
    with open_client(cfg, config_path) as client:
        for field, expr in gpu_queries(cfg, span, series).items():
            key = "model" if field == "serving" else "team"
            samples = instant_vector(client, SOURCE, expr, at)
            found[field] = _by(samples, key, field, selected=cfg.cluster is not None)
    serving = found.pop("serving")
    names = sorted({team for values in found.values() for team in values})
    teams = tuple(
        TeamGpuMonth(
            team,
            found["idle_gpu_hours"].get(team),
            found["utilisation"].get(team),
            found["kwh"].get(team),
            found["co2e_grams"].get(team),
        )
        for team in names
    )
    return GpuMonth(teams, serving)


def _by(
    samples: list[tuple[dict[str, str], float]], key: str, field: str, *, selected: bool
) -> dict[str, float]:
    require_one_cluster(samples, "GPU", selected=selected)
    out: dict[str, float] = {}
    for labels, value in samples:
        name = labels.get(key)
        if not name:
            raise UpstreamPayloadError(f"{SOURCE}: a {field} series lacks its {key} label")
        if not math.isfinite(value) or value < 0:
            raise UpstreamPayloadError(f"{SOURCE}: {field} of {name} is {value}")
        # Series left apart after folding replicas (another `job`) are one team's parts; a
        # mean is not added up.
        additive = field in ("idle_gpu_hours", "kwh", "co2e_grams")
        out[name] = out.get(name, 0.0) + value if additive else value
    return out
