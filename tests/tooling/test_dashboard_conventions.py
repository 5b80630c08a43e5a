"""Dashboard conventions: uids, variables, units, legends, the grid and links in every committed
dashboard; the cluster variable only where there are clusters; a round trip through the SDK."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import DEFAULT, MixinConfig
from chargeback_mixin.dashboards import DASHBOARDS, dashboard_json
from tests.tooling.committed_dashboards import committed_dashboards, every_panel


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


@pytest.mark.parametrize("name", sorted(committed_dashboards()))
def test_dashboard_conventions(name: str) -> None:
    dash = committed_dashboards()[name]
    cfg: MixinConfig = DEFAULT
    assert dash["uid"].startswith(cfg.dashboard_uid_prefix)
    assert len(dash["uid"]) <= 40
    assert dash["uid"] == name, "file name and uid agree, so uids stay stable"
    assert dash["tags"] == list(cfg.dashboard_tags)
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert [v["name"] for v in dash["templating"]["list"]][:2] == ["datasource", "cluster"]
    cluster = variables["cluster"]
    assert cluster["includeAll"] and cluster["multi"] and cluster["allValue"] == ".*"
    assert cluster["query"].endswith(f", {cfg.cluster_label})")
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    raw = json.dumps(dash)
    assert "${DS_" not in raw and "__inputs" not in raw
    ids = [p["id"] for p in every_panel(dash)]
    assert len(ids) == len(set(ids))
    for panel in every_panel(dash):
        if panel["type"] == "row":
            continue
        title = panel["title"]
        assert panel.get("description"), f"{title}: no description"
        assert panel["fieldConfig"]["defaults"].get("unit"), f"{title}: no unit"
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], f"{title}: no query"
        for t in panel["targets"]:
            assert t["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            legend = t.get("legendFormat", "")
            pinned = "$team" in t["expr"]
            if "team" in _by_labels(t["expr"]) and not pinned and not t.get("instant"):
                assert "{{team}}" in legend, f"{title}: legend should name {{team}}"
            if "model" in _by_labels(t["expr"]):
                assert "{{model}}" in legend, f"{title}: legend should name {{model}}"
    if "$team" in raw:
        assert variables["team"]["datasource"]["uid"] == "${datasource}"


@pytest.mark.parametrize("name", sorted(committed_dashboards()))
def test_panels_fit_the_grid_without_overlapping(name: str) -> None:
    taken: dict[tuple[int, int], str] = {}
    for panel in every_panel(committed_dashboards()[name]):
        pos, title = panel["gridPos"], panel["title"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, f"{title}: wider than the grid"
        columns = range(pos["x"], pos["x"] + pos["w"])
        for cell in ((x, y) for x in columns for y in range(pos["y"], pos["y"] + pos["h"])):
            assert cell not in taken, f"{title} overlaps {taken[cell]}"
            taken[cell] = title


@pytest.mark.parametrize("name", sorted(committed_dashboards()))
def test_every_dashboard_links_the_others_in_a_dropdown(name: str) -> None:
    """As kubernetes-mixin's: every dashboard with the mixin's tags, time and variables kept."""
    (link,) = committed_dashboards()[name]["links"]
    assert link["type"] == "dashboards" and link["tags"] == list(DEFAULT.dashboard_tags)
    assert link["asDropdown"] and link["keepTime"] and link["includeVars"]


def test_panels_on_families_absent_without_dcgm_history_say_so() -> None:
    needs = ("gpu_idle_seconds_month_to_date", "gpu_waste_cost_month_to_date")
    found = 0
    for dash in committed_dashboards().values():
        for panel in every_panel(dash):
            exprs = " ".join(t["expr"] for t in panel.get("targets", []))
            if any(n in exprs for n in needs):
                found += 1
                assert "sources.dcgm.prometheus" in panel["description"], panel["title"]
    assert found == len(needs)


def _by_labels(expr: str) -> set[str]:
    """Labels an expression groups by, at its outermost `by` (a cheap reading, enough here)."""
    m = re.match(r"\w+ by \(([^)]*)\)", expr)
    if m:
        return {x.strip() for x in m.group(1).split(",")}
    m = re.match(r"(\w+):", expr)
    return set(m.group(1).split("_")) if m else set()


@pytest.mark.parametrize("name", sorted(committed_dashboards()))
def test_dashboard_round_trips_through_the_sdk(name: str) -> None:
    register_default_plugins()
    raw = committed_dashboards()[name]
    model = Dashboard.from_json(raw)
    again = json.loads(json.dumps(model, cls=JSONEncoder))
    assert again == raw
