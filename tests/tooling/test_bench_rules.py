"""The rules bench's pure parts: Prometheus's own metrics and query answers read right."""

from __future__ import annotations

import math

import pytest

from bench.rule_figures import (
    SizeFigures,
    Tracker,
    parse_self_metrics,
    side_by_side,
    slowest_lines,
    slowest_rules,
    vector_sum,
)

# As Prometheus 2.42 serves them: groups keyed "<file>;<name>", other families in between.
SELF = """# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 2.07618048e+08
# HELP prometheus_rule_group_interval_seconds The interval of a rule group.
# TYPE prometheus_rule_group_interval_seconds gauge
prometheus_rule_group_interval_seconds{rule_group="/tmp/x/rules/a.yml;chargeback.rules"} 10
prometheus_rule_group_interval_seconds{rule_group="/tmp/x/rules/b.yml;chargeback"} 10
# HELP prometheus_rule_group_iterations_total The number of scheduled evaluations.
# TYPE prometheus_rule_group_iterations_total counter
prometheus_rule_group_iterations_total{rule_group="/tmp/x/rules/a.yml;chargeback.rules"} {it}
prometheus_rule_group_iterations_total{rule_group="/tmp/x/rules/b.yml;chargeback"} 7
# HELP prometheus_rule_group_last_duration_seconds The duration of the last evaluation.
# TYPE prometheus_rule_group_last_duration_seconds gauge
prometheus_rule_group_last_duration_seconds{rule_group="/tmp/x/rules/a.yml;chargeback.rules"} {d}
prometheus_rule_group_last_duration_seconds{rule_group="/tmp/x/rules/b.yml;chargeback"} 0.002
# HELP prometheus_rule_group_last_evaluation_samples Samples returned by the last evaluation.
# TYPE prometheus_rule_group_last_evaluation_samples gauge
prometheus_rule_group_last_evaluation_samples{rule_group="/tmp/x/rules/a.yml;chargeback.rules"} 6903
prometheus_rule_group_last_evaluation_samples{rule_group="/tmp/x/rules/b.yml;chargeback"} 88
# HELP prometheus_rule_group_rules The number of rules.
# TYPE prometheus_rule_group_rules gauge
prometheus_rule_group_rules{rule_group="/tmp/x/rules/a.yml;chargeback.rules"} 41
# HELP prometheus_tsdb_head_series Total number of series in the head block.
# TYPE prometheus_tsdb_head_series gauge
prometheus_tsdb_head_series 41604
"""


def _self(iterations: int, duration: float) -> str:
    return SELF.replace("{it}", str(iterations)).replace("{d}", repr(duration))


def test_groups_are_named_without_their_file_and_process_figures_are_read() -> None:
    got = parse_self_metrics(_self(12, 0.18))
    assert set(got.groups) == {"chargeback.rules", "chargeback"}
    rules = got.groups["chargeback.rules"]
    assert (rules.last_duration, rules.interval, rules.iterations) == (0.18, 10.0, 12.0)
    assert (rules.samples, rules.rules) == (6903.0, 41.0)
    assert math.isnan(got.groups["chargeback"].rules)
    assert got.rss_bytes == 207618048.0
    assert got.head_series == 41604.0


def test_an_evaluation_counts_once_however_often_it_is_read() -> None:
    tracker = Tracker(parse_self_metrics(_self(3, 0.5)))
    for text in (_self(3, 0.5), _self(4, 0.2), _self(4, 0.2), _self(6, 0.4)):
        tracker.observe(parse_self_metrics(text))
    # The baseline's evaluation (3) is not counted; 4 and 6 are, 5 was never seen.
    assert tracker.durations["chargeback.rules"] == [0.2, 0.4]
    assert tracker.durations["chargeback"] == []
    assert tracker.cycles() == 0


def _vector(*values: str) -> dict[str, object]:
    result = [
        {"metric": {"job": "x", "i": str(i)}, "value": [1.5, v]} for i, v in enumerate(values)
    ]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def test_a_vector_answer_sums_and_an_empty_one_is_nan() -> None:
    assert vector_sum(_vector("32398")) == 32398.0
    assert vector_sum(_vector("1", "2.5")) == 3.5
    assert math.isnan(vector_sum(_vector()))


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "error", "errorType": "bad_data", "error": "parse error"},
        {"status": "success", "data": {"resultType": "scalar", "result": [1.5, "1"]}},
        {"status": "success", "data": {"resultType": "vector", "result": [{"value": 3}]}},
        {"status": "success", "data": {"resultType": "vector"}},
        ["not", "an", "answer"],
    ],
)
def test_a_failed_or_malformed_answer_is_never_a_figure(answer: object) -> None:
    with pytest.raises(ValueError):
        vector_sum(answer)


def test_the_table_has_a_column_per_size_and_the_ratio_of_mean_to_interval() -> None:
    columns = {}
    for name, durations in (("M", [0.1, 0.3]), ("L", [1.0, 3.0])):
        tracker = Tracker(parse_self_metrics(_self(1, 0.0)))
        tracker.durations["chargeback.rules"] = durations
        end = parse_self_metrics(_self(3, durations[-1]))
        slowest = [(durations[-1], "chargeback.rules", "team:x:sum")]
        columns[name] = SizeFigures.of(
            tracker, end, slowest, scraped_series=100.0, scrape_seconds=0.05, rule_series=math.nan
        )
    lines = side_by_side(columns)
    assert lines[0].split() == ["M", "L"]
    rows = {line[: line.index("  ", 3)].strip(): line.split()[-2:] for line in lines[1:]}
    assert rows["chargeback.rules: mean ms"] == ["200.0", "2000.0"]
    assert rows["chargeback.rules: mean/interval"] == ["0.0200", "0.2000"]
    assert rows["rule-produced series"] == ["-", "-"]
    assert rows["Prometheus RSS MiB"] == ["198", "198"]
    assert slowest_lines(columns)[1].split() == [
        "L",
        "3000.0",
        "ms",
        "chargeback.rules:",
        "team:x:sum",
    ]


def _rule(name: str, seconds: object) -> dict[str, object]:
    return {
        "name": name,
        "query": "1",
        "health": "ok",
        "type": "recording",
        "evaluationTime": seconds,
    }


def test_the_slowest_rules_come_first_across_groups() -> None:
    answer = {
        "status": "success",
        "data": {
            "groups": [
                {"name": "b", "rules": [_rule("fast", 0.001), _rule("slow", 2)]},
                {"name": "a", "rules": [_rule("mid", 0.5), _rule("tie", 0.5)]},
                {"name": "c", "rules": []},
            ]
        },
    }
    assert slowest_rules(answer, 3) == [(2.0, "b", "slow"), (0.5, "a", "mid"), (0.5, "a", "tie")]


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "error", "error": "x"},
        {"status": "success", "data": {}},
        {"status": "success", "data": {"groups": [{"name": "a", "rules": [_rule("r", "1")]}]}},
    ],
)
def test_a_failed_or_malformed_rules_answer_is_never_a_figure(answer: object) -> None:
    with pytest.raises(ValueError):
        slowest_rules(answer)
