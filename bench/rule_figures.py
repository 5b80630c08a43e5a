"""Pure parts of the rules bench: Prometheus's own metrics and query answers read into figures.

Nothing here starts a process or reads a clock; `bench.rules` feeds it what Prometheus served.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

__all__ = [
    "GroupState",
    "SelfMetrics",
    "SizeFigures",
    "Tracker",
    "parse_self_metrics",
    "side_by_side",
    "slowest_lines",
    "slowest_rules",
    "vector_sum",
]

# Prometheus's per-group gauges and counter, by sample name, and the field each fills.
GROUP_SAMPLES = {
    "prometheus_rule_group_last_duration_seconds": "last_duration",
    "prometheus_rule_group_interval_seconds": "interval",
    "prometheus_rule_group_iterations_total": "iterations",
    "prometheus_rule_group_last_evaluation_samples": "samples",
    "prometheus_rule_group_rules": "rules",
}


@dataclass
class GroupState:
    """One rule group as Prometheus last reported it."""

    last_duration: float = math.nan
    interval: float = math.nan
    iterations: float = 0.0
    samples: float = math.nan
    rules: float = math.nan


@dataclass
class SelfMetrics:
    """What one read of Prometheus's own /metrics says about its rule groups and itself."""

    groups: dict[str, GroupState] = field(default_factory=dict)
    rss_bytes: float = math.nan
    head_series: float = math.nan


def _group_name(label: str) -> str:
    """`rule_group` is "<file>;<group>": the group's name is what a reader knows it by."""
    return label.rpartition(";")[2]


def parse_self_metrics(text: str) -> SelfMetrics:
    """Prometheus's /metrics text (format 0.0.4) read into per-group states and process figures."""
    got = SelfMetrics()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            target = GROUP_SAMPLES.get(sample.name)
            if target is not None and "rule_group" in sample.labels:
                state = got.groups.setdefault(
                    _group_name(sample.labels["rule_group"]), GroupState()
                )
                setattr(state, target, float(sample.value))
            elif sample.name == "process_resident_memory_bytes":
                got.rss_bytes = float(sample.value)
            elif sample.name == "prometheus_tsdb_head_series":
                got.head_series = float(sample.value)
    return got


def vector_sum(answer: object) -> float:
    """The sum of an instant-vector answer of /api/v1/query; NaN when it is empty.

    Raises ValueError on anything but a successful vector answer, so a failed query never
    prints as a figure.
    """
    if not isinstance(answer, Mapping) or answer.get("status") != "success":
        raise ValueError(f"query failed: {answer!r}"[:300])
    data = answer.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "vector":
        raise ValueError(f"not an instant vector: {data!r}"[:300])
    result = data.get("result")
    if not isinstance(result, list):
        raise ValueError("vector answer without a result list")
    total, seen = 0.0, False
    for item in result:
        value = item.get("value") if isinstance(item, Mapping) else None
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], str)):
            raise ValueError(f"malformed vector sample: {item!r}"[:300])
        total, seen = total + float(value[1]), True
    return total if seen else math.nan


def slowest_rules(answer: object, n: int = 5) -> list[tuple[float, str, str]]:
    """The `n` rules of /api/v1/rules whose last evaluation took longest: (seconds, group, name).

    Raises ValueError on anything but a successful answer with groups of rules.
    """
    if not isinstance(answer, Mapping) or answer.get("status") != "success":
        raise ValueError(f"rules query failed: {answer!r}"[:300])
    data = answer.get("data")
    groups = data.get("groups") if isinstance(data, Mapping) else None
    if not isinstance(groups, list):
        raise ValueError("rules answer without a list of groups")
    timed = []
    for group in groups:
        for rule in group.get("rules", []) if isinstance(group, Mapping) else []:
            seconds = rule.get("evaluationTime") if isinstance(rule, Mapping) else None
            if not isinstance(seconds, int | float):
                raise ValueError(f"rule without an evaluation time: {rule!r}"[:300])
            timed.append((float(seconds), str(group.get("name")), str(rule.get("name"))))
    return sorted(timed, key=lambda t: (-t[0], t[1], t[2]))[:n]


class Tracker:
    """Each group's evaluation durations, one per evaluation after a baseline iteration.

    Prometheus keeps only the last duration, so the bench reads /metrics more often than
    groups evaluate; an iteration count seen before is not counted twice.
    """

    def __init__(self, baseline: SelfMetrics) -> None:
        self._seen = {name: state.iterations for name, state in baseline.groups.items()}
        self.durations: dict[str, list[float]] = {name: [] for name in baseline.groups}
        self.last: dict[str, GroupState] = dict(baseline.groups)

    def observe(self, now: SelfMetrics) -> None:
        """Count each group's newest evaluation once, when its iteration count has moved."""
        for name, state in now.groups.items():
            if state.iterations > self._seen.get(name, math.inf):
                self._seen[name] = state.iterations
                self.durations.setdefault(name, []).append(state.last_duration)
            self.last[name] = state

    def cycles(self) -> int:
        """Evaluations counted for the group that has had the fewest."""
        return min((len(d) for d in self.durations.values()), default=0)


@dataclass
class SizeFigures:
    """One size's rule-group figures and Prometheus's own, ready to print."""

    durations: dict[str, list[float]]
    groups: dict[str, GroupState]
    scraped_series: float
    scrape_seconds: float
    rule_series: float
    rss_bytes: float
    head_series: float
    slowest: list[tuple[float, str, str]] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        tracker: Tracker,
        end: SelfMetrics,
        slowest: list[tuple[float, str, str]],
        **queried: float,
    ) -> SizeFigures:
        """The figures from a tracker, a last read of /metrics and rules and the queried counts."""
        return cls(
            durations=tracker.durations,
            groups=dict(tracker.last),
            rss_bytes=end.rss_bytes,
            head_series=end.head_series,
            slowest=slowest,
            **queried,
        )


def _ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1e3:.1f}"


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def _group_rows(name: str, sizes: Sequence[SizeFigures]) -> list[tuple[str, list[str]]]:
    states = [s.groups.get(name, GroupState()) for s in sizes]
    means = [_mean(s.durations.get(name, [])) for s in sizes]
    return [
        (f"{name}: rules", [f"{st.rules:.0f}" for st in states]),
        (f"{name}: last ms", [_ms(st.last_duration) for st in states]),
        (f"{name}: mean ms", [_ms(m) for m in means]),
        (f"{name}: evaluations", [str(len(s.durations.get(name, []))) for s in sizes]),
        (f"{name}: interval s", [f"{st.interval:g}" for st in states]),
        (
            f"{name}: mean/interval",
            [_ratio(m, st.interval) for m, st in zip(means, states, strict=True)],
        ),
        (f"{name}: samples out", [f"{st.samples:,.0f}" for st in states]),
    ]


def _ratio(duration: float, interval: float) -> str:
    if math.isnan(duration) or not interval or math.isnan(interval):
        return "-"
    return f"{duration / interval:.4f}"


def _count(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:,.0f}"


def side_by_side(sizes: Mapping[str, SizeFigures]) -> list[str]:
    """The table's lines: one row per figure, one column per size, groups in name order."""
    names = list(sizes)
    figures = list(sizes.values())
    rows: list[tuple[str, list[str]]] = [
        ("series scraped", [_count(f.scraped_series) for f in figures]),
        ("scrape ms", [_ms(f.scrape_seconds) for f in figures]),
    ]
    for group in sorted({g for f in figures for g in f.groups}):
        rows += _group_rows(group, figures)
    mib = [_count(f.rss_bytes / 2**20) for f in figures]
    rows += [
        ("rule-produced series", [_count(f.rule_series) for f in figures]),
        ("head series", [_count(f.head_series) for f in figures]),
        ("Prometheus RSS MiB", mib),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"   {'':<{width}} " + " ".join(f"{n:>12}" for n in names)]
    lines += [f"   {label:<{width}} " + " ".join(f"{v:>12}" for v in vals) for label, vals in rows]
    return lines


def slowest_lines(sizes: Mapping[str, SizeFigures]) -> list[str]:
    """Per size, its slowest rules' last evaluation, slowest first."""
    return [
        f"   {size} {_ms(seconds):>8} ms  {group}: {rule}"
        for size, figures in sizes.items()
        for seconds, group, rule in figures.slowest
    ]
