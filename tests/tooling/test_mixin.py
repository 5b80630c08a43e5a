"""The mixin: committed files match the code, alerts have their cases, queries use known metrics.

The committed dashboards' own conventions: test_dashboard_conventions.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml

from chargeback_mixin import alerts, generate, rules
from chargeback_mixin.config import DEFAULT, load_config
from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.family import Kind
from tests.tooling.committed_dashboards import committed_dashboards, every_panel

ROOT = Path(__file__).resolve().parents[2]

CATALOGUE_NAMES = {f.exposed_name for f in CATALOGUE}
RECORDED = rules.recorded_names(DEFAULT)
KNOWN = CATALOGUE_NAMES | RECORDED | {"up"}
# Grafana's own variables, replaced by a parseable stand-in before parsing.
GRAFANA_VARS = {
    "$__rate_interval": "1m",
    "$team": "team",
    "$cohort": ".*",
    "$cluster": "__cluster_variable__",
}


# Alerts that name the replica (instance) that fails rather than counting replicas once.
PER_TARGET_ALERTS = {"ChargebackSourceDown", "ChargebackSourceStale"}


# --- generated files ------------------------------------------------------------------------


def test_committed_files_equal_generated() -> None:
    for rel, content in generate.render_all(DEFAULT).items():
        path = ROOT / rel
        assert path.exists(), f"{rel} missing: run `python -m chargeback_mixin.generate`"
        assert path.read_text(encoding="utf-8") == content, f"{rel} is stale: regenerate it"


def test_no_stray_generated_files() -> None:
    expected = set(generate.render_all(DEFAULT))
    on_disk = {f"dashboards/{p.name}" for p in (ROOT / "dashboards").glob("*.json")}
    on_disk |= {f"rules/{p.name}" for p in (ROOT / "rules").glob("chargeback*.yml")}
    assert on_disk == expected


def test_generator_cli_writes_every_file(tmp_path: Path) -> None:
    assert generate.main(["--out-dir", str(tmp_path)]) == 0
    for rel, content in generate.render_all(DEFAULT).items():
        assert (tmp_path / rel).read_text(encoding="utf-8") == content


def test_short_for_variant_only_changes_for(tmp_path: Path) -> None:
    assert generate.main(["--out-dir", str(tmp_path), "--short-for"]) == 0
    short = yaml.safe_load((tmp_path / generate.ALERTS_FILE).read_text())
    normal = yaml.safe_load((ROOT / generate.ALERTS_FILE).read_text())
    assert {r["for"] for r in short["groups"][0]["rules"]} == {"1s"}
    for s, n in zip(short["groups"][0]["rules"], normal["groups"][0]["rules"], strict=True):
        # Descriptions quote the `for`; everything else is the shipped rule.
        for key in ("alert", "expr", "labels"):
            assert s[key] == n[key]
        for key in ("summary", "runbook_url"):
            assert s["annotations"][key] == n["annotations"][key]


def test_config_file_overrides_knobs(tmp_path: Path) -> None:
    knobs = tmp_path / "knobs.yaml"
    knobs.write_text('selector: \'job="cb", cluster="eu"\'\nidle_cost_share: 1\ncurrency: USD\n')
    cfg = load_config(knobs)
    assert cfg.idle_cost_share == 1.0
    assert cfg.sel('team="a"') == '{job="cb", cluster="eu", team="a"}'
    assert load_config(None) == DEFAULT


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no_such_knob: 1\n", "unknown knobs: no_such_knob"),
        ("cluster_label: k8s-cluster\n", "not a Prometheus label name"),
        ("replica_labels: [instance, cluster]\n", "is the cluster label"),
        ("idle_cost_share: high\n", "expected float"),
        ("idle_cost_for: soon\n", "not a Prometheus duration"),
        ("- a\n", "expected a mapping"),
    ],
)
def test_config_file_errors(tmp_path: Path, text: str, error: str) -> None:
    knobs = tmp_path / "knobs.yaml"
    knobs.write_text(text)
    with pytest.raises(ValueError, match=error):
        load_config(knobs)
    assert generate.main(["--out-dir", str(tmp_path), "--config", str(knobs)]) == 2


# --- rules ----------------------------------------------------------------------------------


def _groups(rel: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))
    groups: list[dict[str, Any]] = doc["groups"]
    return groups


def test_rule_groups_and_naming() -> None:
    recording, aliases = _groups(generate.RULES_FILE)
    (alerting,) = _groups(generate.ALERTS_FILE)
    assert recording["name"] == "chargeback.rules"
    assert aliases["name"] == "chargeback.rules.deprecated"
    assert alerting["name"] == "chargeback"
    for r in recording["rules"] + aliases["rules"]:
        assert re.fullmatch(r"[a-z_]+:[a-z_]+:[a-z_0-9]+", r["record"]), r["record"]
    names = [r["alert"] for r in alerting["rules"]]
    assert len(names) == len(set(names))
    for r in alerting["rules"]:
        assert re.fullmatch(r"Chargeback(?:[A-Z0-9][a-z0-9]*)+", r["alert"]), r["alert"]
        assert r["labels"]["severity"] in {"critical", "warning", "info"}
        ann = r["annotations"]
        assert set(ann) == {"summary", "description", "runbook_url"}
        assert "{{" not in ann["summary"], "summary must be static"
        assert ann["runbook_url"] == DEFAULT.runbook(r["alert"])


def test_alerts_asked_for_are_all_there() -> None:
    assert set(alerts.alert_names(DEFAULT)) == {
        "ChargebackIdleGpuCostHigh",
        "ChargebackTeamGpusIdle",
        "ChargebackTeamCostAnomaly",
        "ChargebackTeamGpuBudgetExceeded",
        "ChargebackTeamGpuBudgetForecastExceeded",
        "ChargebackLlmBudgetAt80Percent",
        "ChargebackLlmBudgetAt95Percent",
        "ChargebackLlmBudgetExceeded",
        "ChargebackLlmBudgetForecastExceeded",
        "ChargebackBorrowingSustained",
        "ChargebackTeamPreemptedWorkHigh",
        "ChargebackTeamWaitingWhileQuotaIdle",
        "ChargebackBillDrift",
        "ChargebackUnallocatedShareHigh",
        "ChargebackSelfHostedPricingDrift",
        "ChargebackGpuPriceDiffers",
        "ChargebackSourceDown",
        "ChargebackSourceStale",
        "ChargebackExporterAbsent",
        "ChargebackSourceEndpointsFailed",
        "ChargebackBuildFailing",
        "ChargebackSourceRecordsDropped",
        "ChargebackWorkerRestarted",
        "ChargebackWorkerDown",
        "ChargebackSourceClosedDaysRepaired",
        "ChargebackTeamsFolded",
    }


def test_every_alert_has_a_runbook_section_and_promtool_cases() -> None:
    runbook = (ROOT / "docs" / "runbook.md").read_text(encoding="utf-8")
    anchors = {m.lower() for m in re.findall(r"^## (\w+)", runbook, re.MULTILINE)}
    tests = "".join(p.read_text() for p in (ROOT / "tests" / "rules").glob("*.yaml"))
    for name in alerts.alert_names(DEFAULT):
        assert name.lower() in anchors, f"docs/runbook.md lacks a section for {name}"
        fires = re.findall(rf"alertname: {name}\n\s+eval_time: \S+\n\s+exp_alerts:\n", tests)
        silent = re.findall(rf"alertname: {name}\n\s+eval_time: \S+\n\s+exp_alerts: \[\]", tests)
        assert fires, f"no promtool case where {name} fires"
        assert silent, f"no promtool case where {name} stays silent"


# --- PromQL everywhere ----------------------------------------------------------------------


def _dashboard_exprs() -> Iterator[tuple[str, str]]:
    for name, dash in committed_dashboards().items():
        for panel in every_panel(dash):
            for target in panel.get("targets", []):
                yield f"{name}: {panel['title']}", target["expr"]
        for var in dash["templating"]["list"]:
            if var["type"] == "query":
                inner = re.fullmatch(r"label_values\((.*), \w+\)", var["query"])
                assert inner, var["query"]
                yield f"{name}: ${var['name']}", inner.group(1)


def _rule_exprs() -> Iterator[tuple[str, str]]:
    for rel in (generate.RULES_FILE, generate.ALERTS_FILE):
        for group in _groups(rel):
            for r in group["rules"]:
                yield r.get("record") or r["alert"], r["expr"]


ALL_EXPRS = list(_rule_exprs()) + list(_dashboard_exprs())


def _selectors(expr: str) -> list[promql_parser.VectorSelector]:
    for var, stand_in in GRAFANA_VARS.items():
        expr = expr.replace(var, stand_in)
    found: list[promql_parser.VectorSelector] = []

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


@pytest.mark.parametrize(("where", "expr"), ALL_EXPRS, ids=[w for w, _ in ALL_EXPRS])
def test_expression_parses_and_uses_known_metrics(where: str, expr: str) -> None:
    selectors = _selectors(expr)
    assert selectors, f"{where}: no metric"
    job = DEFAULT.selector
    for s in selectors:
        assert s.name in KNOWN, f"{where}: {s.name} is neither in the catalogue nor recorded"
        if s.name not in RECORDED:
            # Raw series are always narrowed by the one configured selector.
            text = ", ".join(f'{m.name}="{m.value}"' for m in s.matchers.matchers)
            assert job in text, f"{where}: {s.name} lacks {job}"


def test_rate_and_increase_read_counters_only() -> None:
    """A month-to-date total is a gauge: its slope is deriv(), never rate()."""
    counters = {f.exposed_name for f in CATALOGUE if f.kind is Kind.COUNTER}
    for where, expr in ALL_EXPRS:
        for name in re.findall(r"\b(?:i?rate|increase)\((chargeback_[a-z0-9_]+)", expr):
            assert name in counters, f"{where}: rate() or increase() of the gauge {name}"


def test_raw_series_are_one_copy_per_replica_before_aggregating() -> None:
    replicas = "max without (" + ", ".join(DEFAULT.replica_labels) + ") ("
    for where, expr in ALL_EXPRS:
        if where.endswith(("$team", "$cohort", "$cluster", "$dimension")) or "absent(" in expr:
            continue
        for s in _selectors(expr):
            name = s.name or ""
            if name in RECORDED or name == "up":
                continue
            # These two are per target on purpose: one broken replica is worth knowing.
            if where in PER_TARGET_ALERTS:
                continue
            # Every raw selector sits right inside the dedup, alone or in a rate/deriv/increase.
            fns = ("", "rate(", "deriv(", "increase(")
            assert any(f"{replicas}{fn}{name}" in expr for fn in fns), (
                f"{where}: {name} is aggregated across replicas"
            )


def test_every_dashboard_query_is_narrowed_by_the_cluster_variable() -> None:
    for where, expr in _dashboard_exprs():
        if where.endswith("$cluster"):
            continue
        for s in _selectors(expr):
            found = [m for m in s.matchers.matchers if m.name == DEFAULT.cluster_label]
            assert len(found) == 1, f"{where}: {s.name} is not narrowed by $cluster"
            assert found[0].value == "__cluster_variable__", where
            assert str(found[0].op) == "MatchOp.Re", where


def test_rules_group_by_the_cluster_label_everywhere() -> None:
    for where, expr in _rule_exprs():
        for m in re.finditer(r"\b(sum|avg|max|min|count) (by|without) \(([^)]*)\)", expr):
            labels = {x.strip() for x in m.group(3).split(",")}
            if m.group(2) == "by":
                assert DEFAULT.cluster_label in labels, f"{where}: {m.group(0)} merges clusters"
            else:
                # The replicas, or a label that names one value only (set by the rule, or
                # narrowed to one resource or state), never the cluster.
                one_value = {"scope", "resource", "state"}
                assert labels == set(DEFAULT.replica_labels) or labels <= one_value, (
                    f"{where}: {m.group(0)}"
                )
        for m in re.finditer(r"\bon \(([^)]*)\)", expr):
            assert DEFAULT.cluster_label in m.group(1), f"{where}: joins across clusters"


def test_every_rate_uses_rate_interval_in_dashboards() -> None:
    for where, expr in _dashboard_exprs():
        for window in re.findall(r"(?:rate|increase|deriv)\([^\[]*\[([^\]]+)\]", expr):
            assert window == "$__rate_interval", f"{where}: {expr}"


def test_recorded_series_are_all_used() -> None:
    text = "\n".join(e for _, e in ALL_EXPRS)
    unused = [n for n in RECORDED if n not in text]
    assert not unused, f"recorded but never read: {unused}"


# Families no rule or panel reads, each explained where the operator looks for it.
DIAGNOSTICS = {
    "chargeback_attribution_fallback_cost_per_hour": "docs/runbook.md",
    "chargeback_cluster_gpu_price_difference_month_to_date": "docs/runbook.md",
    "chargeback_llm_unknown_models": "docs/sources/litellm.md",
    "chargeback_llm_models_over_cap": "docs/metrics.md",
    "chargeback_llm_month_edge_offset_seconds": "docs/sources/litellm.md",
    "chargeback_llm_seconds_per_token": "docs/llm.md",
    "chargeback_llm_completion_weight_fallback": "docs/llm.md",
    "chargeback_gpu_price_build_power_fallback": "docs/sources/dcgm.md",
    "chargeback_source_duration_seconds": "docs/runbook.md",
    "chargeback_build_info": "docs/metrics.md",
    "chargeback_config_info": "docs/metrics.md",
    "chargeback_cluster_cost_forecast_month_end": "docs/forecast.md",
    "chargeback_team_cost_forecast_month_end": "docs/forecast.md",
    "chargeback_dimension_cost_forecast_month_end": "docs/forecast.md",
}


def test_every_served_family_is_read_or_explained() -> None:
    # A lean exposition: every family is read by a rule, an alert or a panel, or is one of a
    # few diagnostics a document tells the operator to look at.
    read = {s.name for _, expr in ALL_EXPRS for s in _selectors(expr)}
    unread = {f.exposed_name for f in CATALOGUE} - read
    assert unread == set(DIAGNOSTICS), f"read by nothing: {sorted(unread - set(DIAGNOSTICS))}"
    for name, doc in DIAGNOSTICS.items():
        assert name in (ROOT / doc).read_text(encoding="utf-8"), f"{doc} does not explain {name}"
