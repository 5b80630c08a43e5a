"""End to end: the demo exporter, a real Prometheus with the mixin's rules, a real Alertmanager.

Everything runs on loopback with dynamically picked ports; every wait is bounded. The alert
thresholds are lowered through the mixin's knobs (and every `for` shortened) so that the demo's
numbers cross them at any date and hour: the test proves the path rules -> Prometheus ->
Alertmanager -> webhook, while tests/rules/ proves the shipped thresholds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.advice_history import dcgm_openmetrics
from chargeback_demo.cluster import CLUSTER
from chargeback_demo.history import STEP, backfill
from chargeback_demo.prometheus import (
    Process,
    free_port,
    start_alertmanager,
    start_prometheus,
    stop,
    ui_page,
    wait_ready,
    write_rule_files,
)
from chargeback_mixin import deprecated, rules
from chargeback_mixin.alerts import alert_names
from chargeback_mixin.config import DEFAULT
from chargeback_mixin.dashboards import DASHBOARDS, dashboard_json
from exporter.exposition.catalogue import CATALOGUE
from tests.support.prometheus_api import CHECKOUT, get, poll, query, recorded

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None
    or (shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")) is None,
    reason="prometheus and alertmanager not installed (make test installs them)",
)

DEADLINE = 90.0
# The one line that chooses what Prometheus scrapes: the real demo exporter.
EXPORTER_ARGV = [sys.executable, "-m", "chargeback_demo"]
E2E_CONFIG = dataclasses.replace(
    DEFAULT.with_short_for(),
    idle_cost_share=0.0,  # any idle cost at all
    idle_utilization=1.01,  # any team holding GPUs
    llm_budget_warning=0.0,  # any team with a LiteLLM max_budget
)
IDLE_ALERTS = {"ChargebackIdleGpuCostHigh", "ChargebackTeamGpusIdle"}
# Families only an exporter reading DCGM through Prometheus serves (the month's utilisation
# history): the demo reads DCGM through the test's Prometheus, as `make demo` does.
# More than a scrape's worth apart: the demo runs under faketime and Prometheus does not.
CLOCK_SKEW = 600.0
DAY = 86_400.0
NEEDS_DCGM_HISTORY = (
    "chargeback_team_gpu_idle_seconds_month_to_date",
    "chargeback_team_gpu_waste_cost_month_to_date",
)
BUDGET_ALERTS = {
    "ChargebackLlmBudgetAt80Percent",
    "ChargebackLlmBudgetAt95Percent",
    "ChargebackLlmBudgetExceeded",
    "ChargebackTeamGpuBudgetExceeded",
}


# --- processes ------------------------------------------------------------------------------


class _Webhook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]]
    lock: threading.Lock

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.lock:
            self.received.extend(json.loads(body)["alerts"])
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclasses.dataclass
class Stack:
    exporter: str
    prometheus: str
    alertmanager: str
    alerts: list[dict[str, Any]]
    lock: threading.Lock

    def received(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.alerts)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work = tmp_path_factory.mktemp("e2e")
    procs: list[Process] = []
    received: list[dict[str, Any]] = []
    lock = threading.Lock()
    handler = type("Webhook", (_Webhook,), {"received": received, "lock": lock})
    webhook = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    try:
        port, prom_port, dcgm_port = free_port(), free_port(), free_port()
        # The demo reads DCGM through this test's Prometheus, which scrapes its fake
        # dcgm-exporter on a port chosen here (chargeback_demo.exporter).
        env = {
            **os.environ,
            "DEMO_DCGM_PORT": str(dcgm_port),
            "DEMO_DCGM_PROMETHEUS": f"http://127.0.0.1:{prom_port}",
        }
        am, am_url = start_alertmanager(
            work / "alertmanager",
            webhook_url=f"http://127.0.0.1:{webhook.server_port}/",
            group_wait="1s",
            group_interval="1s",
        )
        procs.append(am)
        rule_files = write_rule_files(work / "rules", E2E_CONFIG)
        if "FAKETIME" not in os.environ:
            # A week written at a faked "now" would sit in Prometheus's future (it keeps real
            # time) and make it refuse every sample it scrapes ("out of bounds"). Under
            # libfaketime the advice goes without history, as the DCGM figures do
            # (_clocks_disagree).
            week = dcgm_openmetrics(CLUSTER, datetime.now(UTC) - STEP, f"127.0.0.1:{dcgm_port}")
            backfill(work, week, work / "prometheus" / "data")
        prom, prom_url = start_prometheus(
            work / "prometheus",
            targets=[f"127.0.0.1:{port}"],
            rule_files=rule_files,
            alertmanager=am_url.removeprefix("http://"),
            interval="1s",
            port=prom_port,
            jobs={"dcgm-exporter": [f"127.0.0.1:{dcgm_port}"]},
        )
        procs.append(prom)
        # Prometheus first, a week of DCGM history in it: the demo's first advice read finds it.
        wait_ready(prom, f"{prom_url}/-/ready", DEADLINE)
        with (work / "exporter.log").open("wb") as log:
            exporter = subprocess.Popen(
                [*EXPORTER_ARGV, f"--web.listen-address=127.0.0.1:{port}"],
                stdout=log,
                stderr=log,
                cwd=CHECKOUT,
                env=env,
            )
        procs.append(exporter)
        exporter_url = f"http://127.0.0.1:{port}"
        wait_ready(exporter, f"{exporter_url}/metrics", DEADLINE)
        wait_ready(am, f"{am_url}/-/ready", DEADLINE)
        yield Stack(exporter_url, prom_url, am_url, received, lock)
    finally:
        for proc in reversed(procs):
            stop(proc)
        webhook.shutdown()
        webhook.server_close()


# --- the exporter's own numbers --------------------------------------------------------------


def _exposition(stack: Stack) -> dict[str, list[tuple[dict[str, str], float]]]:
    text = get(f"{stack.exporter}/metrics").decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def _expected(stack: Stack) -> dict[str, float] | None:
    """Recorded series computed in Python from the exporter's /metrics (None before data)."""
    m = _exposition(stack)
    if "chargeback_team_cost_per_hour" not in m:
        return None
    cost = m["chargeback_team_cost_per_hour"]
    mtd = m["chargeback_team_cost_month_to_date"]
    llm = set(rules.LLM_COMPONENTS)
    idle = [v for lb, v in cost if lb["team"] == "__idle__" or lb["component"] == "idle_share"]
    hardware = sum(v for lb, v in cost if lb["component"] not in llm)
    # The GPU budget's kind counts everything but external LLM spend (serving included).
    research = [
        v for lb, v in mtd if lb["team"] == "research" and lb["component"] != "llm_external"
    ]
    idle_by = {lb["resource"]: v for lb, v in m["chargeback_cluster_idle_cost_per_hour"]}
    total_by = {lb["resource"]: v for lb, v in m["chargeback_cluster_resource_cost_per_hour"]}
    ratio = rules.IDLE_RESOURCE_RATIO
    return {
        "cluster:chargeback_team_cost_per_hour:sum": sum(v for _, v in cost),
        # Per resource, before any policy: idle GPUs apart from idle CPU.
        f'{ratio}{{resource="gpu"}}': idle_by["gpu"] / total_by["gpu"],
        f'{ratio}{{resource="cpu"}}': idle_by["cpu"] / total_by["cpu"],
        rules.IDLE_COST_RATIO: sum(idle) / hardware,
        'team_kind:chargeback_team_cost_month_to_date:sum{team="research", kind="gpu"}': sum(
            research
        ),
    }


def test_recording_rules_reproduce_the_exporters_numbers(stack: Stack) -> None:
    def agree() -> tuple[dict[str, float], dict[str, float]] | None:
        want = _expected(stack)
        got = recorded(stack.prometheus, list(want)) if want else None
        # The demo refreshes in the background: retry until a scrape and a rule evaluation
        # both saw the exposition we read.
        if want and got and all(math.isclose(got[k], want[k], rel_tol=1e-9) for k in want):
            return got, want
        return None

    got, want = poll("recorded series to equal sums over the exporter's /metrics", agree, DEADLINE)
    assert got == pytest.approx(want, rel=1e-9)


def test_promtool_checks_the_live_demo_metrics_clean(stack: Stack) -> None:
    """Every family the demo serves, DCGM's month through Prometheus included, passes the lint."""
    if not _clocks_disagree(stack):
        poll(
            "the month's idle GPU time through Prometheus",
            lambda: set(NEEDS_DCGM_HISTORY) <= set(_exposition(stack)),
            DEADLINE,
        )
    body = get(f"{stack.exporter}/metrics")
    promtool = shutil.which("promtool")
    assert promtool, "promtool comes with Prometheus"
    done = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


def test_the_demos_prometheus_links_answer(stack: Stack) -> None:
    """The rules and alerts pages the demo prints: /classic/... on Debian's 2.42, /... upstream."""
    for page in ("rules", "alerts"):
        assert get(ui_page(stack.prometheus, page)), page


def test_every_rule_evaluates_without_error(stack: Stack) -> None:
    def evaluated() -> list[dict[str, Any]] | None:
        doc = json.loads(get(f"{stack.prometheus}/api/v1/rules"))
        found = [r for g in doc["data"]["groups"] for r in g["rules"]]
        done = found and all(not r.get("lastEvaluation", "0001").startswith("0001") for r in found)
        return found if done else None

    found = poll("every rule to be evaluated once", evaluated, DEADLINE)
    bad = {r["name"]: r.get("lastError") for r in found if r["health"] != "ok"}
    assert not bad
    aliases = deprecated.aliases(DEFAULT)
    assert len(found) == len(rules.recording_rules(DEFAULT)) + len(aliases) + len(
        alert_names(DEFAULT)
    )


# --- dashboards -----------------------------------------------------------------------------


def _dashboard_queries() -> list[tuple[str, str]]:
    out = []
    for name, build in DASHBOARDS.items():
        doc = json.loads(dashboard_json(build(DEFAULT)))
        for panel in doc["panels"]:
            for target in panel.get("targets", []):
                out.append((f"{name}: {panel['title']} [{target['refId']}]", target["expr"]))
        for var in doc["templating"]["list"]:
            if var["type"] == "query":
                inner = re.fullmatch(r"label_values\((.*), \w+\)", var["query"])
                assert inner
                out.append((f"{name}: ${var['name']}", inner.group(1)))
    return out


def _teams(stack: Stack) -> list[str]:
    series = query(stack.prometheus, "team:chargeback_team_cost_per_hour:sum")
    return sorted(s["metric"]["team"] for s in series if not s["metric"]["team"].startswith("__"))


def _clocks_disagree(stack: Stack) -> bool:
    """Whether this process (and the demo it started) keep another time than Prometheus.

    Under faketime the demo's clock moves and Prometheus's (a Go binary) does not. The demo
    reads DCGM through this Prometheus at its own "now", where Prometheus holds no samples, so
    every figure that comes from DCGM is absent; the rest must still show.
    """
    doc = json.loads(get(f"{stack.prometheus}/api/v1/query?query=time()"))
    return abs(float(doc["data"]["result"][1]) - time.time()) > CLOCK_SKEW


def _from_dcgm(expr: str) -> bool:
    # The advice reads DCGM's history through Prometheus too.
    return any(f.exposed_name in expr for f in CATALOGUE if f.source in ("dcgm", "advice"))


def test_every_dashboard_query_returns_data(stack: Stack) -> None:
    poll("recorded series", lambda: _teams(stack), DEADLINE)
    teams = _teams(stack)
    assert teams
    pending = dict(_dashboard_queries())
    assert len(pending) >= 50, "every panel target and variable query is checked"
    if _clocks_disagree(stack):
        pending = {w: e for w, e in pending.items() if not _from_dcgm(e)}
    else:
        poll(
            "the month's idle GPU-hours through Prometheus",
            lambda: set(NEEDS_DCGM_HISTORY) <= set(_exposition(stack)),
            DEADLINE,
        )
    served = set(_exposition(stack))
    if _llm_month_not_begun(stack):
        # The documented month-edge error: LiteLLM's rows are UTC dates, so in a zone ahead of
        # UTC the month's first hours have no LLM usage yet. Everything else must still show.
        assert "chargeback_llm_spend_month_to_date" not in served
        pending = {w: e for w, e in pending.items() if "llm" not in e}
    # Figures a young month has not made yet: a bill counts only whole UTC days that ended, and
    # the demo's Kueue first preempts research's sweep at 08:00 on the 3rd (fake_workloads).
    age = time.time() - _exposition(stack)["chargeback_month_start_timestamp_seconds"][0][1]
    for young, words in ((2 * DAY, ("chargeback_bill_",)), (4 * DAY, ("preempted",))):
        if age < young:
            pending = {w: e for w, e in pending.items() if not any(x in e for x in words)}

    def substitutions(expr: str) -> list[str]:
        expr = expr.replace("$__rate_interval", "1m").replace("$cohort", ".*")
        expr = expr.replace("$cluster", ".*").replace("$dimension", "product")
        # A query on the team variable passes when some team of the demo has data for it.
        return [expr.replace("$team", t) for t in teams] if "$team" in expr else [expr]

    def drain() -> bool:
        for where, expr in list(pending.items()):
            if any(query(stack.prometheus, e) for e in substitutions(expr)):
                del pending[where]
        return not pending

    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and not drain():
        time.sleep(1.0)
    missing = sorted(f for f in _catalogue_names() if f not in served)
    assert not pending, (
        f"{len(pending)} dashboard queries return no data: {json.dumps(pending, indent=1)}\n"
        f"catalogue families the demo does not serve: {missing}"
    )


def _llm_month_not_begun(stack: Stack) -> bool:
    """Whether LiteLLM's last read came before the first UTC date of the exporter's month."""
    m = _exposition(stack)
    start = m["chargeback_month_start_timestamp_seconds"][0][1]
    offset = m["chargeback_llm_month_edge_offset_seconds"][0][1]  # east of UTC positive
    read = dict(
        (labels["source"], v) for labels, v in m["chargeback_source_last_success_timestamp_seconds"]
    )
    return read["litellm"] < start + offset


def _catalogue_names() -> set[str]:
    return {f.exposed_name for f in CATALOGUE}


# --- alerts ---------------------------------------------------------------------------------


def test_idle_and_budget_alerts_reach_the_webhook(stack: Stack) -> None:
    # The idle alerts need DCGM's figures, which a demo on another clock cannot read.
    need_idle = not _clocks_disagree(stack)

    def both() -> dict[str, dict[str, Any]] | None:
        by_name = {a["labels"]["alertname"]: a for a in stack.received()}
        idle = IDLE_ALERTS & set(by_name)
        budget = BUDGET_ALERTS & set(by_name)
        if (idle or not need_idle) and budget:
            return {n: by_name[n] for n in idle | budget}
        return None

    delivered = poll("an idle alert and a budget alert at the webhook", both, DEADLINE)
    # The default base is the exporter's own /runbook at the shipped Service: here the demo's.
    runbook = get(f"{stack.exporter}/runbook").decode()
    for name, alert in delivered.items():
        assert alert["status"] == "firing"
        assert alert["labels"]["severity"] in {"critical", "warning", "info"}
        assert alert["annotations"]["summary"]
        assert "{{" not in alert["annotations"]["description"]
        url = alert["annotations"]["runbook_url"]
        assert url == DEFAULT.runbook(name)
        assert url.startswith(f"{DEFAULT.runbook_base_url}#")
        assert f' id="{url.partition("#")[2]}"' in runbook


def test_e2e_rules_differ_from_shipped_only_in_knobs(tmp_path: Path) -> None:
    """The rules the e2e loads differ from the shipped ones only in knobs, never in shape."""
    shipped = write_rule_files(tmp_path / "shipped")
    e2e = write_rule_files(tmp_path / "e2e", E2E_CONFIG)
    assert [p.name for p in shipped] == [p.name for p in e2e]
    assert shipped[0].read_text() == e2e[0].read_text()  # recording rules: identical
