"""End to end, many clusters: an HA pair and a single exporter, remote-written into one Prometheus.

Cluster `a` runs two replicas of the demo exporter, cluster `b` one; each cluster's Prometheus
scrapes its own with the external label `cluster` and remote-writes into a central Prometheus
(`--web.enable-remote-write-receiver`, the protocol Thanos Receive and Mimir speak) that runs
the shipped recording rules. Its per-cluster and global figures must equal sums over the
exporters' own /metrics, counting each replica pair once. Everything runs on loopback with
picked ports, and every wait is bounded.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.prometheus import (
    Process,
    free_port,
    start_prometheus,
    stop,
    wait_ready,
    write_rule_files,
)
from chargeback_mixin import deprecated, rules
from chargeback_mixin.alerts import alert_names
from chargeback_mixin.config import DEFAULT
from tests.support.prometheus_api import CHECKOUT, get, poll, query, recorded

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None, reason="prometheus not installed (make test installs it)"
)

DEADLINE = 120.0
EXPORTER_ARGV = [sys.executable, "-m", "chargeback_demo"]
# Cluster name -> how many exporter replicas it runs.
CLUSTERS = {"a": 2, "b": 1}
Sample = tuple[tuple[tuple[str, str], ...], float]


@dataclasses.dataclass
class World:
    exporters: dict[str, list[str]]  # cluster -> exporter base URLs
    central: str


def _exporter(work: Any, name: str, procs: list[Process]) -> str:
    port = free_port()
    with (work / f"exporter-{name}.log").open("wb") as log:
        proc = subprocess.Popen(
            [*EXPORTER_ARGV, f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log,
            stderr=log,
            cwd=CHECKOUT,
        )
    procs.append(proc)
    url = f"http://127.0.0.1:{port}"
    wait_ready(proc, f"{url}/metrics", DEADLINE)
    return url


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    work = tmp_path_factory.mktemp("multicluster")
    procs: list[Process] = []
    try:
        central, central_url = start_prometheus(
            work / "central",
            targets=[],
            rule_files=write_rule_files(work / "rules", DEFAULT),
            interval="1s",
            remote_write_receiver=True,
        )
        procs.append(central)
        wait_ready(central, f"{central_url}/-/ready", DEADLINE)
        exporters: dict[str, list[str]] = {}
        for cluster, replicas in CLUSTERS.items():
            urls = [_exporter(work, f"{cluster}{i}", procs) for i in range(replicas)]
            exporters[cluster] = urls
            edge, edge_url = start_prometheus(
                work / f"prometheus-{cluster}",
                targets=[u.removeprefix("http://") for u in urls],
                interval="1s",
                external_labels={"cluster": cluster},
                remote_write=[f"{central_url}/api/v1/write"],
            )
            procs.append(edge)
            wait_ready(edge, f"{edge_url}/-/ready", DEADLINE)
        yield World(exporters, central_url)
    finally:
        for proc in reversed(procs):
            stop(proc)


# --- the exporters' own numbers --------------------------------------------------------------


def _samples(url: str, name: str) -> list[Sample]:
    text = get(f"{url}/metrics").decode()
    return [
        (tuple(sorted(s.labels.items())), s.value)
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == name
    ]


def _one_copy(urls: list[str], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Each series once across replicas: the max, as the rules take it."""
    merged: dict[tuple[tuple[str, str], ...], float] = {}
    for url in urls:
        for labels, value in _samples(url, name):
            merged[labels] = max(value, merged.get(labels, -math.inf))
    return merged


def _expected(world: World) -> dict[str, float]:
    """Figures the central rules must record, computed in Python from every /metrics."""
    want: dict[str, float] = {}
    for cluster, urls in world.exporters.items():
        cost = _one_copy(urls, "chargeback_team_cost_per_hour")
        budget = _one_copy(urls, "chargeback_team_budget")
        gpus = _one_copy(urls, "chargeback_gpus")
        on = f'cluster="{cluster}"'
        want[f"cluster:chargeback_team_cost_per_hour:sum{{{on}}}"] = sum(cost.values())
        want[f'team:chargeback_team_cost_per_hour:sum{{{on}, team="research"}}'] = sum(
            v for lb, v in cost.items() if ("team", "research") in lb
        )
        want[f'team_kind:chargeback_team_budget:sum{{{on}, team="research", kind="gpu"}}'] = sum(
            v for lb, v in budget.items() if {("team", "research"), ("kind", "gpu")} <= set(lb)
        )
        allocated = f'team_state:chargeback_gpus:sum{{{on}, team="research", state=~"busy|idle"}}'
        want[f"sum by (cluster, team) ({allocated})"] = sum(
            v
            for lb, v in gpus.items()
            if ("team", "research") in lb and dict(lb)["state"] in {"busy", "idle"}
        )
    want["sum(cluster:chargeback_team_cost_per_hour:sum)"] = sum(
        want[f'cluster:chargeback_team_cost_per_hour:sum{{cluster="{c}"}}'] for c in CLUSTERS
    )
    return want


# --- tests -------------------------------------------------------------------------------------


def test_per_cluster_and_global_figures_equal_the_exporters_own(world: World) -> None:
    def agree() -> tuple[dict[str, float], dict[str, float]] | None:
        want = _expected(world)
        got = recorded(world.central, list(want))
        # The exporters refresh in the background: retry until scrapes, remote write and a
        # rule evaluation all saw the expositions we read.
        if got and all(math.isclose(got[k], want[k], rel_tol=1e-9) for k in want):
            return got, want
        return None

    got, want = poll("central recorded series to equal sums over /metrics", agree, DEADLINE)
    assert got == pytest.approx(want, rel=1e-9)
    # Not doubled: cluster a's two replicas count once, near one replica's own total.
    key = 'cluster:chargeback_team_cost_per_hour:sum{cluster="a"}'
    first = sum(v for _, v in _samples(world.exporters["a"][0], "chargeback_team_cost_per_hour"))
    assert got[key] > 0
    assert got[key] < 1.5 * first


def test_recorded_series_keep_the_clusters_apart(world: World) -> None:
    def clusters() -> list[str] | None:
        series = query(world.central, "cluster:chargeback_team_cost_per_hour:sum")
        found = sorted(s["metric"].get("cluster", "") for s in series)
        return found if len(found) == len(CLUSTERS) else None

    assert poll("one recorded series per cluster", clusters, DEADLINE) == sorted(CLUSTERS)

    def components() -> list[dict[str, Any]] | None:
        # Each cluster's samples arrive by their own remote write: poll, as for the totals.
        series = query(world.central, "team_component:chargeback_team_cost_per_hour:sum")
        found = {s["metric"].get("cluster", "") for s in series}
        return series if found == set(CLUSTERS) else None

    series = poll("team and component series from every cluster", components, DEADLINE)
    # No replica label survives a recording rule.
    for s in series:
        assert not set(s["metric"]) & set(DEFAULT.replica_labels), s["metric"]


def test_every_rule_evaluates_without_error_on_remote_written_data(world: World) -> None:
    def evaluated() -> list[dict[str, Any]] | None:
        doc = json.loads(get(f"{world.central}/api/v1/rules"))
        found = [r for g in doc["data"]["groups"] for r in g["rules"]]
        done = found and all(not r.get("lastEvaluation", "0001").startswith("0001") for r in found)
        return found if done else None

    found = poll("every rule to be evaluated once", evaluated, DEADLINE)
    assert not {r["name"]: r.get("lastError") for r in found if r["health"] != "ok"}
    aliases = deprecated.aliases(DEFAULT)
    assert len(found) == len(rules.recording_rules(DEFAULT)) + len(aliases) + len(
        alert_names(DEFAULT)
    )
