"""The simulated cluster every demo fake reads from: one node, 4 x H100, three teams, over time.

Schedules are in whole UTC hours and repeat daily, so any window can be integrated exactly by
cutting it at hour boundaries. Every fake (OpenCost, DCGM, Kubernetes, LiteLLM) derives its
answers from this one model, so their numbers agree with each other.

The story, in UTC: research trains `train-llm` on one GPU around the clock and runs a two-GPU
`sweep` every night (18-08), borrowing the GPU vision leaves unused; by day (08-18) vision
serves its `detector` and retrains it on the GPU research lends while its sweep sleeps; search
serves Llama on vLLM all day at 2% utilisation. The node is full at every hour and some team
always borrows: the cohort's nominal quota (2 + 1 + 1) is the node's 4 GPUs, and over a day
research borrows 4 GPU-hours more than it lends.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = [
    "CLUSTER",
    "Cluster",
    "LlmTraffic",
    "Queue",
    "Usage",
    "Workload",
]

HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Workload:
    """A controller's pods: what they request and when they run (UTC hours, [start, end))."""

    namespace: str
    kind: str  # lowercase controller kind, as OpenCost prints it
    name: str
    labels: dict[str, str]
    gpus: tuple[int, ...]  # indexes of the GPUs it holds on the node
    cpu: float  # cores
    ram_gib: float
    pv_gib: float = 0.0
    hours: tuple[tuple[int, int], ...] = ((0, 24),)
    utilisation: float = 0.0  # mean DCGM graphics-engine activity, 0..1
    queue: str | None = None  # Kueue ClusterQueue, when admitted through one
    network_gib_per_hour: float = 0.0
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def controller(self) -> str:
        """OpenCost's controller key, `<kind>:<name>`."""
        return f"{self.kind}:{self.name}"

    @property
    def pod(self) -> str:
        """A stable pod name for the workload's (first) pod."""
        return f"{self.name}-0"

    def runs_at(self, t: datetime) -> bool:
        """True when the workload runs at instant t."""
        hour = t.astimezone(UTC).hour
        return any(start <= hour < end for start, end in self.hours)

    def utilisation_at(self, t: datetime) -> float:
        """Utilisation that wanders a little around the mean, so graphs move."""
        if not self.gpus or not self.runs_at(t):
            return 0.0
        # Wobble in proportion, so an idle GPU stays idle and a busy one stays busy.
        wobble = 0.1 * self.utilisation * math.sin(t.timestamp() / 900.0 + len(self.name))
        return min(1.0, max(0.0, self.utilisation + wobble))


@dataclass(frozen=True)
class Usage:
    """What one workload consumed inside a window."""

    workload: Workload
    minutes: float
    gpu_hours: float
    cpu_core_hours: float
    ram_gib_hours: float
    pv_gib_hours: float
    network_gib: float
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Queue:
    """A Kueue ClusterQueue of the demo: nominal GPU quota in one cohort."""

    name: str
    gpu_nominal: int
    cpu_nominal: str
    memory_nominal: str
    lending_limit: int | None = None


@dataclass(frozen=True)
class LlmTraffic:
    """Tokens a LiteLLM team sends to a model per hour, with LiteLLM's declared prices."""

    team_id: str | None  # None: a key with no team, which LiteLLM reports as "Unassigned"
    team_alias: str | None
    model: str
    prompt_per_hour: int
    completion_per_hour: int
    requests_per_hour: int
    input_cost_per_token: float
    output_cost_per_token: float
    hours: tuple[tuple[int, int], ...] = ((0, 24),)
    tags: tuple[str, ...] = ()  # LiteLLM request tags (metadata.tags)


@dataclass(frozen=True)
class Cluster:
    """The whole simulated cluster and its price list."""

    name: str
    node: str
    gpu_model: str
    gpu_count: int
    gpu_price: float  # per GPU-hour
    cpu_cores: float
    cpu_price: float  # per core-hour
    ram_gib: float
    ram_price: float  # per GiB-hour
    pv_price: float  # per GiB-hour
    network_price: float  # per GiB
    workloads: tuple[Workload, ...]
    cohort: str
    gpu_flavor: str
    queues: tuple[Queue, ...]
    llm_teams: tuple[tuple[str, str | None, float | None, float | None], ...] = field(
        default=()
    )  # (team_id, alias, max_budget, soft_budget)
    llm_traffic: tuple[LlmTraffic, ...] = ()
    # Namespace annotations, as OpenCost reports them with every allocation of the namespace.
    namespace_annotations: dict[str, dict[str, str]] = field(default_factory=dict)

    def usage(self, start: datetime, end: datetime) -> list[Usage]:
        """Exact consumption of every workload that ran inside [start, end)."""
        totals: dict[str, list[float]] = {}
        first: dict[str, datetime] = {}
        last: dict[str, datetime] = {}
        for seg_start, seg_end in _segments(start, end):
            hours = (seg_end - seg_start).total_seconds() / 3600.0
            for w in self.workloads:
                if not w.runs_at(seg_start):
                    continue
                acc = totals.setdefault(w.controller + w.namespace, [0.0] * 6)
                acc[0] += hours * 60.0
                acc[1] += hours * len(w.gpus)
                acc[2] += hours * w.cpu
                acc[3] += hours * w.ram_gib
                acc[4] += hours * w.pv_gib
                acc[5] += hours * w.network_gib_per_hour
                first.setdefault(w.controller + w.namespace, seg_start)
                last[w.controller + w.namespace] = seg_end
        out = []
        for w in self.workloads:
            key = w.controller + w.namespace
            if key in totals:
                m, g, c, r, p, n = totals[key]
                out.append(Usage(w, m, g, c, r, p, n, first[key], last[key]))
        return out

    def capacity_cost(self, start: datetime, end: datetime) -> dict[str, float]:
        """What the node costs over the window, per resource (the assets side)."""
        hours = (end - start).total_seconds() / 3600.0
        return {
            "gpu": self.gpu_count * self.gpu_price * hours,
            "cpu": self.cpu_cores * self.cpu_price * hours,
            "ram": self.ram_gib * self.ram_price * hours,
        }

    def gpu_holder(self, index: int, t: datetime) -> Workload | None:
        """The workload that holds GPU `index` at instant t, if any."""
        for w in self.workloads:
            if index in w.gpus and w.runs_at(t):
                return w
        return None

    def queue_usage(self, queue: str, t: datetime) -> int:
        """GPUs admitted through a ClusterQueue at instant t."""
        return sum(len(w.gpus) for w in self.workloads if w.queue == queue and w.runs_at(t))

    def llm_usage(
        self, start: datetime, end: datetime
    ) -> Iterator[tuple[LlmTraffic, datetime, float]]:
        """(traffic, segment start, hours) for every hour segment in which the traffic flows."""
        for seg_start, seg_end in _segments(start, end):
            hours = (seg_end - seg_start).total_seconds() / 3600.0
            for traffic in self.llm_traffic:
                hour = seg_start.astimezone(UTC).hour
                if any(a <= hour < b for a, b in traffic.hours):
                    yield traffic, seg_start, hours


def _segments(start: datetime, end: datetime) -> Iterator[tuple[datetime, datetime]]:
    """Cut [start, end) at UTC hour boundaries."""
    t = start.astimezone(UTC)
    end = end.astimezone(UTC)
    while t < end:
        boundary = t.replace(minute=0, second=0, microsecond=0) + HOUR
        seg_end = min(boundary, end)
        yield t, seg_end
        t = seg_end


CLUSTER = Cluster(
    name="default-cluster",
    node="gpu-node-1",
    gpu_model="NVIDIA H100 80GB HBM3",
    gpu_count=4,
    gpu_price=1.40,
    cpu_cores=64,
    cpu_price=0.031611,
    ram_gib=512,
    ram_price=0.004237,
    pv_price=0.00005479452,
    network_price=0.01,
    cohort="gpu-pool",
    gpu_flavor="h100",
    workloads=(
        Workload(
            "ns-research",
            "job",
            "train-llm",
            {"team": "research", "app": "train-llm"},
            gpus=(0,),
            cpu=16,
            ram_gib=128,
            pv_gib=500,
            utilisation=0.85,
            queue="cq-research",
            network_gib_per_hour=2.0,
            annotations={"finops.io/product": "assistant"},
        ),
        Workload(
            "ns-research",
            "job",
            "sweep",
            {"team": "research", "app": "sweep"},
            gpus=(1, 2),
            cpu=8,
            ram_gib=32,
            hours=((18, 24), (0, 8)),
            utilisation=0.7,
            queue="cq-research",
            annotations={"finops.io/product": "assistant"},
        ),
        Workload(
            "ns-vision",
            "deployment",
            "detector",
            {"app": "detector", "producto": "inspection"},
            gpus=(2,),
            cpu=8,
            ram_gib=64,
            hours=((8, 18),),
            utilisation=0.45,
            queue="cq-vision",
            network_gib_per_hour=1.0,
        ),
        Workload(
            "ns-vision",
            "job",
            "retrain",
            {"app": "retrain", "producto": "inspection", "entorno": "dev"},
            gpus=(1,),
            cpu=8,
            ram_gib=48,
            hours=((8, 18),),
            utilisation=0.8,
            queue="cq-vision",
        ),
        Workload(
            "ns-search",
            "deployment",
            "vllm-llama",
            {"team": "search", "app": "vllm"},
            gpus=(3,),
            cpu=8,
            ram_gib=96,
            pv_gib=200,
            utilisation=0.02,
            queue="cq-search",
            network_gib_per_hour=0.5,
            annotations={"finops.io/product": "assistant"},
        ),
        Workload("sandbox", "deployment", "notebook", {}, gpus=(), cpu=2, ram_gib=8),
        Workload(
            "default",
            "cronjob",
            "batch-etl",
            {"app.kubernetes.io/part-of": "research"},
            gpus=(),
            cpu=4,
            ram_gib=16,
            hours=((1, 5),),
        ),
    ),
    queues=(
        Queue("cq-research", 2, "32", "256Gi"),
        Queue("cq-vision", 1, "16", "128Gi", lending_limit=1),
        Queue("cq-search", 1, "16", "128Gi"),
    ),
    llm_teams=(
        ("9f3c2a10-research", "research", 400.0, 300.0),
        ("b71e44d2-vision", "vision", 150.0, 100.0),
        ("c0a8d9e3-search", None, None, None),
    ),
    llm_traffic=(
        LlmTraffic(
            "9f3c2a10-research",
            "research",
            "llama-3-70b",
            400_000,
            120_000,
            300,
            2e-7,
            6e-7,
            tags=("product:assistant",),
        ),
        LlmTraffic(
            "9f3c2a10-research",
            "research",
            "gpt-4o",
            30_000,
            10_000,
            40,
            2.5e-6,
            1e-5,
            tags=("product:assistant", "env:prod"),
        ),
        LlmTraffic(
            "b71e44d2-vision",
            "vision",
            "gpt-4o",
            60_000,
            25_000,
            90,
            2.5e-6,
            1e-5,
            hours=((7, 21),),
            tags=("product:inspection",),
        ),
        LlmTraffic("b71e44d2-vision", "vision", "llama-3-70b", 80_000, 30_000, 60, 2e-7, 6e-7),
        LlmTraffic("c0a8d9e3-search", None, "llama-3-70b", 20_000, 5_000, 20, 2e-7, 6e-7),
        LlmTraffic(None, None, "gpt-4o", 5_000, 2_000, 6, 2.5e-6, 1e-5, hours=((9, 17),)),
    ),
    namespace_annotations={
        "ns-research": {"finops.io/environment": "dev"},
        "ns-vision": {"finops.io/environment": "prod"},
        "ns-search": {"finops.io/environment": "prod"},
    },
)
