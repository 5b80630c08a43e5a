"""Every recording rule is named `level:metric:operations`, as Prometheus' practice asks.

- level: the labels the series keeps, joined by `_`: every `by` label but the cluster's, and
  every label the rule sets; `cluster` alone when the cluster is all it keeps.
- metric: a family of the exporter's catalogue, unchanged; a ratio of two is `<a>_per_<b>`, and
  a ratio named after one family divides that family by itself (split by a label).
- operations: words of OPERATIONS joined by `_`, the newest first.
"""

from __future__ import annotations

import re

import pytest

from chargeback_mixin import deprecated, rules
from chargeback_mixin.config import DEFAULT, MixinConfig
from exporter.exposition.catalogue import CATALOGUE

FAMILIES = frozenset(f.exposed_name for f in CATALOGUE)
# What a rule did to its metric; a word here is one of Prometheus' aggregations, or says the
# arithmetic in words (hours_ago: hours from the timestamp to now).
OPERATIONS = frozenset(
    {"sum", "avg", "max", "min", "ratio", "forecast", "relative", "change"}
    | {"hours", "since", "start", "ago", "ahead", "month", "to", "date"}
)
_NAME = re.compile(r"^([a-z]+(?:_[a-z]+)*):([a-z0-9_]+):([a-z]+(?:_[a-z]+)*)$")
_FAMILY = re.compile(r"chargeback_[a-z0-9_]+")
_BY = re.compile(r"^(?:sum|max|avg|min) by \(([^)]*)\)")


def _kept_labels(rule: rules.Rule, c: MixinConfig) -> set[str] | None:
    """The labels the series keeps besides the cluster's, when its expression says so."""
    match = _BY.match(str(rule["expr"]))
    if match is None:
        return None
    by = {label.strip() for label in match.group(1).split(",")} - {c.cluster_label}
    labels = rule.get("labels")
    return by | (set(labels) if isinstance(labels, dict) else set())


def _metric_is_catalogued(metric: str, operations: list[str], expr: str) -> bool:
    if "ratio" not in operations:
        return metric in FAMILIES
    if metric in FAMILIES:
        # A share of one family (split by a label): that family, and no other, on both sides.
        return set(_FAMILY.findall(expr)) == {metric}
    parts = metric.split("_per_chargeback_")
    return len(parts) == 2 and {parts[0], f"chargeback_{parts[1]}"} <= FAMILIES


@pytest.mark.parametrize("rule", rules.recording_rules(DEFAULT), ids=lambda r: str(r["record"]))
def test_recording_rule_is_named_level_metric_operations(rule: rules.Rule) -> None:
    name = str(rule["record"])
    match = _NAME.match(name)
    assert match, f"{name}: not level:metric:operations"
    level, metric, ops = match.group(1), match.group(2), match.group(3).split("_")
    assert set(ops) <= OPERATIONS, f"{name}: operations {sorted(set(ops) - OPERATIONS)}"
    catalogued = _metric_is_catalogued(metric, ops, str(rule["expr"]))
    assert catalogued, f"{name}: {metric} is not a catalogued family (or a_per_b of two)"
    kept = _kept_labels(rule, DEFAULT)
    if kept is not None:
        named = set(level.split("_")) - {DEFAULT.cluster_label}
        assert named == kept, f"{name}: the level says {sorted(named)}, it keeps {sorted(kept)}"


def test_every_old_name_has_an_alias_and_no_alias_shadows_a_rule() -> None:
    old = set(deprecated.renamed(DEFAULT))
    # 19 renamed to the practice, and the idle GPU-hours now kept in GPU-seconds.
    assert len(old) == 20
    assert not old & rules.recorded_names(DEFAULT)
