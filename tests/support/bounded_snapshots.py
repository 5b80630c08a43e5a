"""Snapshots at the edges of what the sources accept, drawn by hypothesis, and the demo's config
to join them under: the one way the property tests over the join build their inputs."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from chargeback_demo.stack import demo_config_dict
from exporter.calendar import month_start
from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.checks import MAX_COST, MAX_GPUS, MAX_TOKENS
from exporter.sources.dcgm.records import DcgmSnapshot, GpuRecord
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage, TeamBudget
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode, OpenCostSnapshot
from exporter.sources.opencost.source import COMPONENT_FIELDS
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW
from tests.support.properties import examples

__all__ = [
    "MODELS",
    "NAMESPACES",
    "NODES",
    "QUEUES",
    "TINY",
    "bounded_snapshots",
    "demo_config",
    "join_now",
    "join_settings",
    "window_hours",
]

NAMESPACES = ("ns-research", "ns-vision", "ns-search", "ns-nobody")
NODES = ("n1", "n2")
QUEUES = ("cq-research", "cq-vision", "cq-search")
MODELS = ("llama-3-70b", "gpt-4o", "unknown-model")
GPU = "nvidia.com/gpu"
PRODUCT = "nvidia_com_gpu_product"
MODEL = {"n1": "NVIDIA-H100-80GB-HBM3", "n2": "NVIDIA-L40S"}
FLAVOR_PRODUCT = (("h100", MODEL["n1"]), ("l40s", MODEL["n2"]))

# The edges of what the sources accept: zero, OpenCost's resolution, just under the bound.
TINY = 1e-9
money = st.one_of(
    st.sampled_from([0.0, TINY, 0.01, MAX_COST / 2, math.nextafter(MAX_COST, 0)]),
    st.floats(min_value=TINY, max_value=MAX_COST, exclude_max=True),
)
# LiteLLM spend is not rounded: any non-negative double below the bound, denormals included.
spend = st.one_of(
    st.sampled_from([0.0, 5e-324, 1e-300, math.nextafter(MAX_COST, 0)]),
    st.floats(min_value=0.0, max_value=MAX_COST, exclude_max=True),
)
quota = st.one_of(
    st.sampled_from([0.0, 5e-324, 1.0, math.nextafter(1e9, 0)]),
    st.floats(min_value=0.0, max_value=1e9, exclude_max=True),
)
tokens = st.one_of(st.sampled_from([0, 1, MAX_TOKENS - 1]), st.integers(0, MAX_TOKENS - 1))


def demo_config(policy: IdlePolicy, by_node: bool = False, **extra: Any) -> Config:
    """The demo's config under `policy`, with `extra` top-level settings set over it."""
    urls = {name: f"http://{name}:1" for name in ("opencost", "dcgm", "kueue", "litellm")}
    data: dict[str, Any] = demo_config_dict(urls, "/nonexistent")
    data.update(idle_policy=policy.value, idle_by_node=by_node, **extra)
    return Config.model_validate(data)


def join_now(config: Config, snapshots: Snapshots) -> Chargeback:
    """The join of `snapshots` as the exporter makes it at FIXED_NOW, mid-month."""
    return join(config, Attributor(config), snapshots, Reading.open(FIXED_NOW, config.zone))


def join_settings(full_count: int) -> settings:
    """Hypothesis settings for a property over the join: slow examples, drawn the same each run."""
    return settings(
        max_examples=examples(full_count),
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )


@st.composite
def allocation_sets(draw: st.DrawFn, hours: float) -> AllocationSet:
    """An OpenCost window of `hours` ending at FIXED_NOW, its costs at the bounds."""
    start = FIXED_NOW - timedelta(hours=hours)
    allocations = []
    for i in range(draw(st.integers(0, 5))):
        ns = draw(st.sampled_from(NAMESPACES))
        node = draw(st.sampled_from(NODES))
        costs = {c: draw(money) for c in COMPONENT_FIELDS}
        # Zero, or OpenCost's resolution up to what MAX_GPUS could run in the window.
        gpu_hours = draw(st.just(0.0) | st.floats(TINY, MAX_GPUS * hours, exclude_max=True))
        allocations.append(Allocation(f"{node}/{ns}/w{i}", ns, node, {}, {}, costs, gpu_hours))
    idle = {r: draw(money) for r in ("gpu", "cpu", "ram")}
    nodes = {n: {r: draw(money) for r in ("gpu", "cpu", "ram")} for n in NODES}
    return AllocationSet(start, FIXED_NOW, tuple(allocations), idle, nodes)


@st.composite
def bounded_snapshots(draw: st.DrawFn, with_llm: bool) -> Snapshots:
    """Every source's snapshot with values at or near its bounds (LiteLLM's only `with_llm`)."""
    month_hours = FIXED_NOW - month_start(FIXED_NOW, demo_config(IdlePolicy.SEPARATE).zone)
    # Two GPU flavors at their own prices: h100 on n1, l40s on n2 (by the product label).
    assets = draw(
        st.none()
        | st.just(
            tuple(
                GpuNode(
                    n,
                    4.0,
                    draw(st.just(0.0) | st.floats(TINY, 1e6)),
                    draw(money),
                    {PRODUCT: MODEL[n]},
                )
                for n in NODES
            )
        )
    )
    opencost = OpenCostSnapshot(
        rate=draw(allocation_sets(1.0)),
        month=draw(allocation_sets(month_hours.total_seconds() / 3600)),
        gpu_nodes=assets,
    )
    queues = tuple(
        QuotaRecord(
            q, "pool", flavor, GPU, draw(quota), draw(quota), draw(quota), draw(quota), draw(quota)
        )
        for q in QUEUES
        for flavor in ("h100", "l40s")
    )
    flavors = tuple(FlavorRecord(f, {"nvidia.com/gpu.product": p}) for f, p in FLAVOR_PRODUCT)
    gpus = tuple(
        GpuRecord(
            node,
            str(i),
            f"GPU-{node}-{i}",
            MODEL[node].replace("-", " "),
            namespace=draw(st.sampled_from(("", *NAMESPACES))),
            pod=f"p{i}",
            utilisation=draw(st.floats(0.0, 1.0)),
        )
        for node in NODES
        for i in range(2)
    )
    litellm = None
    if with_llm:
        teams = tuple(
            TeamBudget(t, None, draw(spend), draw(st.none() | spend), None, None)
            for t in ("9f3c2a10-research", "vision", "c0a8d9e3-search")
        )
        usage = tuple(
            ModelUsage(team, None, model, draw(spend), draw(tokens), draw(tokens), draw(tokens))
            for team in ("9f3c2a10-research", "vision", None)
            for model in MODELS
        )
        litellm = LiteLLMSnapshot(teams, usage)
    return Snapshots(opencost, DcgmSnapshot(gpus), KueueSnapshot(queues, flavors=flavors), litellm)


def window_hours(bundle: Snapshots) -> float:
    """The rate window's length: the hourly ledger is its money over these hours."""
    assert bundle.opencost is not None
    return bundle.opencost.rate.hours
