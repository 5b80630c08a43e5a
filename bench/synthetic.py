"""A synthetic cluster at four sizes, answered by the demo's own fakes of the four upstreams.

The cluster is sharded by node: each node is a demo `Cluster` of up to eight GPUs, so the
DCGM fake renders one endpoint per node exactly as dcgm-exporter does, and the OpenCost fake's
per-node answers merge into one allocation set (one `__idle__`, summed) as OpenCost's would.
Kueue sees one ClusterQueue per team; LiteLLM sees every team spending on every model every
hour of its history. Everything is derived from the size alone, so two runs agree byte for byte.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from chargeback_demo import fake_dcgm, fake_kube, fake_litellm
from chargeback_demo.cluster import Cluster, LlmTraffic, Queue, Workload
from chargeback_demo.fake_opencost import FakeOpenCost
from chargeback_demo.httpfake import FakeRequest, FakeResponse, Handler, json_response
from chargeback_demo.opencost_json import round5
from exporter.clock import fixed_clock

__all__ = ["API_KEY", "NOW", "SIZES", "TOKEN", "Size", "Synthetic", "config_dict"]

# Mid-month, mid-day, the tests' instant: every request the exporter makes at it is the same.
NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
API_KEY = "sk-bench-viewer-key"  # bench-only credentials for the fakes
TOKEN = "bench-kube-api-token"
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class Size:
    """How big the synthetic cluster is."""

    name: str
    gpus: int
    workloads: int
    teams: int
    llm_teams: int
    llm_models: int

    @property
    def nodes(self) -> int:
        """GPU nodes, eight GPUs each (the last one may have fewer)."""
        return math.ceil(self.gpus / GPUS_PER_NODE)


SIZES = {
    "S": Size("S", 100, 500, 10, 10, 5),
    "M": Size("M", 2_000, 10_000, 200, 200, 20),
    "L": Size("L", 10_000, 50_000, 1_000, 1_000, 50),
    # Only on request (BENCH_SIZES=...,XL): generating it takes an hour and several GiB.
    "XL": Size("XL", 50_000, 250_000, 5_000, 5_000, 50),
}


@dataclass(frozen=True)
class _AllDay(Cluster):
    """A cluster whose LLM traffic flows every hour: a day is one segment, not 24."""

    def llm_usage(
        self, start: datetime, end: datetime
    ) -> Iterator[tuple[LlmTraffic, datetime, float]]:
        hours = (end - start).total_seconds() / 3600.0
        for traffic in self.llm_traffic:
            yield traffic, start, hours


def _node(size: Size, index: int, workloads: tuple[Workload, ...]) -> Cluster:
    gpus = min(GPUS_PER_NODE, size.gpus - index * GPUS_PER_NODE)
    return Cluster(
        name="bench",
        node=f"gpu-node-{index}",
        gpu_model="NVIDIA H100 80GB HBM3",
        gpu_count=gpus,
        gpu_price=1.40,
        cpu_cores=128,
        cpu_price=0.031611,
        ram_gib=1024,
        ram_price=0.004237,
        pv_price=0.00005479452,
        network_price=0.01,
        workloads=workloads,
        cohort="gpu-pool",
        gpu_flavor="h100",
        queues=(),
    )


def _workload(size: Size, i: int, gpu: int | None) -> Workload:
    team = f"team-{i % size.teams}"
    # A third of the GPU jobs run by day only, so some GPUs sit idle now and then.
    hours = ((8, 18),) if gpu is not None and i % 3 == 0 else ((0, 24),)
    return Workload(
        namespace=f"ns-{team}",
        kind="job" if gpu is not None else "deployment",
        name=f"w-{i}",
        labels={"team": team, "app": f"app-{i % 97}"},
        gpus=() if gpu is None else (gpu,),
        cpu=4.0 if gpu is not None else 0.5,
        ram_gib=64.0 if gpu is not None else 2.0,
        pv_gib=100.0 if i % 5 == 0 else 0.0,
        hours=hours,
        utilisation=(i % 10) / 10.0 if gpu is not None else 0.0,
        queue=f"cq-{team}" if gpu is not None else None,
        network_gib_per_hour=0.1,
    )


def _nodes(size: Size) -> list[Cluster]:
    placed: list[list[Workload]] = [[] for _ in range(size.nodes)]
    for i in range(size.workloads):
        node = i % size.nodes
        on_node = len(placed[node])
        gpus = min(GPUS_PER_NODE, size.gpus - node * GPUS_PER_NODE)
        placed[node].append(_workload(size, i, on_node if on_node < gpus else None))
    return [_node(size, n, tuple(ws)) for n, ws in enumerate(placed)]


def _queues(size: Size, nodes: list[Cluster]) -> Cluster:
    """One ClusterQueue per team; one stand-in workload per team carries its admitted GPUs."""
    held: dict[str, int] = {}
    for node in nodes:
        for w in node.workloads:
            if w.queue is not None and w.runs_at(NOW):
                held[w.queue] = held.get(w.queue, 0) + len(w.gpus)
    names = [f"cq-team-{k}" for k in range(size.teams)]
    share = max(1, size.gpus // size.teams)
    stand_ins = tuple(
        Workload(f"ns-{q[3:]}", "job", q, {}, tuple(range(held.get(q, 0))), 0.0, 0.0, queue=q)
        for q in names
    )
    queues = tuple(Queue(q, share, str(share * 16), f"{share * 128}Gi") for q in names)
    return Cluster(**{**_fields(_node(size, 0, stand_ins)), "queues": queues})


def _llm(size: Size) -> Cluster:
    teams = tuple(
        (f"id-team-{k}", f"team-{k}", 1000.0 + k, 800.0 + k) for k in range(size.llm_teams)
    )
    traffic = tuple(
        LlmTraffic(
            f"id-team-{k}",
            f"team-{k}",
            f"model-{m}",
            1_000 * (1 + (k + m) % 7),
            300 * (1 + m % 5),
            2 + m % 3,
            1e-7 * (1 + m % 4),
            4e-7 * (1 + m % 4),
        )
        for k in range(size.llm_teams)
        for m in range(size.llm_models)
    )
    return _AllDay(**{**_fields(_node(size, 0, ())), "llm_teams": teams, "llm_traffic": traffic})


def _fields(cluster: Cluster) -> dict[str, Any]:
    return {f: getattr(cluster, f) for f in cluster.__dataclass_fields__}


class Synthetic:
    """The fakes of one size: handlers for each upstream, answering at NOW."""

    def __init__(self, size: Size) -> None:
        self.size = size
        clock = fixed_clock(NOW)
        self.nodes = _nodes(size)
        self._opencost = [FakeOpenCost(node, clock) for node in self.nodes]
        self.dcgm_endpoints = {
            f"/{node.node}/metrics": fake_dcgm.make_handler(node, clock) for node in self.nodes
        }
        self.kueue: Handler = fake_kube.make_handler(
            _queues(size, self.nodes), clock, page_size_cap=500, token=TOKEN
        )
        self.litellm: Handler = fake_litellm.make_handler(_llm(size), clock, api_key=API_KEY)

    def opencost(self, request: FakeRequest) -> FakeResponse:
        """Every node's answer, merged into one set per step as OpenCost would send it."""
        answers = [fake.handle(request) for fake in self._opencost]
        if any(a.status != 200 for a in answers) or request.path == "/healthz":
            return answers[0]
        bodies = [json.loads(a.body) for a in answers]
        merged = bodies[0]
        for body in bodies[1:]:
            if isinstance(merged["data"], dict):  # /assets: one map of assets, keyed per node
                _merge_step(merged["data"], body["data"] or {})
                continue
            for target, step in zip(merged["data"], body["data"], strict=True):
                _merge_step(target, step or {})
        return json_response(200, merged)

    def dcgm(self, request: FakeRequest) -> FakeResponse:
        """dcgm-exporter of the node named in the path (`/<node>/metrics`)."""
        handler = self.dcgm_endpoints.get(request.path)
        if handler is None:
            return FakeResponse(404, b"404 page not found\n")
        return handler(FakeRequest(request.method, "/metrics", request.query, request.headers))


def _merge_step(target: dict[str, Any], step: dict[str, Any]) -> None:
    for name, alloc in step.items():
        mine = target.get(name)
        if mine is None:
            target[name] = alloc
            continue
        # Only `__idle__` (and the cluster-wide entries) repeat across nodes: sum their figures.
        for field, value in alloc.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                mine[field] = round5((mine.get(field) or 0) + value)


def config_dict(size: Size, urls: dict[str, str], secrets: str) -> dict[str, Any]:
    """The exporter's config for the synthetic cluster: every team declared, every source on."""
    teams = [
        {
            "name": f"team-{k}",
            "namespaces": [f"ns-team-{k}"],
            "cluster_queues": [f"cq-team-{k}"],
            **({"litellm_teams": [f"id-team-{k}"]} if k < size.llm_teams else {}),
        }
        for k in range(size.teams)
    ]
    timing = {"interval": "5s", "timeout": "60s", "max_staleness": "1h"}
    # At XL, OpenCost's /allocation (about 350 MB) and LiteLLM's busiest day (about 180 MB) are
    # over the 128 MiB default: an operator of a cluster that size raises the limit the same way.
    big = {"max_response_size": "1GiB"} if size.gpus > SIZES["L"].gpus else {}
    return {
        "currency": "USD",
        "teams": teams,
        "attribution": {"team_label_keys": ["team"], "max_teams": max(size.teams, 100)},
        "sources": {
            "opencost": {"url": urls["opencost"], **timing, **big},
            "dcgm": {"urls": [f"{urls['dcgm']}/{n}/metrics" for n in _node_names(size)], **timing},
            "kueue": {
                "url": urls["kueue"],
                "token_file": f"{secrets}/kube-token",
                "page_size": 500,
                **timing,
            },
            "litellm": {
                "url": urls["litellm"],
                "api_key_file": f"{secrets}/litellm-key",
                **timing,
                **big,
            },
        },
    }


def _node_names(size: Size) -> list[str]:
    return [f"gpu-node-{n}" for n in range(size.nodes)]
