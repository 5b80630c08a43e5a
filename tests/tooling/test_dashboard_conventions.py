"""Dashboard conventions: the cluster variable only where there are clusters, units that fit."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from chargeback_mixin.config import DEFAULT
from chargeback_mixin.dashboards import DASHBOARDS, dashboard_json


def _panels(config: Any = DEFAULT) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, build in DASHBOARDS.items():
        for panel in json.loads(dashboard_json(build(config)))["panels"]:
            if panel.get("type") != "row":
                yield name, panel


@pytest.mark.parametrize("multi, hide", [(False, 2), (True, 0)])
def test_the_cluster_variable_shows_only_when_the_prometheus_holds_several_clusters(
    multi: bool, hide: int
) -> None:
    """Grafana's `hide` (2: hidden), set by the `multi_cluster` knob; hidden, it stays All."""
    config = dataclasses.replace(DEFAULT, multi_cluster=multi)
    for name, build in DASHBOARDS.items():
        variables = json.loads(dashboard_json(build(config)))["templating"]["list"]
        (cluster,) = [v for v in variables if v["name"] == DEFAULT.cluster_label]
        assert cluster.get("hide", 0) == hide, name
        assert cluster["includeAll"] and cluster["allValue"] == ".*", name


def test_rates_of_failures_and_tokens_are_not_shown_as_requests() -> None:
    for name, panel in _panels():
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
        assert unit != "reqps", f"{name}: {panel['title']}"
        if "Tokens per second" in panel["title"]:
            assert unit == "suffix: tokens/s", f"{name}: {panel['title']}"
        if panel["title"] == "Source refresh errors":
            assert unit == "cps", name
