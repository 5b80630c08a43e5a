"""A self-hosted model served at another throughput: its namespace's month, shrunk or grown (pure).

Throughput enters the ledger through the hours the serving namespace holds its GPUs: the same
tokens served faster need fewer GPU-hours. The month served the model at

    T0 = tokens / (s x H x 3,600)  tokens a second per GPU,

where H is the GPU-hours of its serving namespace and s the model's share of that namespace's
cost as the ledger moved it (its weighted tokens among the namespace's models). At T1 the same
tokens take s x H x T0 / T1 GPU-hours, so the GPU, CPU and RAM of each of the namespace's
allocations are scaled by g = 1 - s x (1 - T0 / T1), and what they no longer cost becomes idle
(or, slower, is taken from idle): the cluster's cost is unchanged, and the idle policy decides
who pays for it. Storage, network and the rest are not held by the serving hour and stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from exporter.ledger.result import Chargeback
from exporter.ledger.what_if.settings import WhatIfError
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet

__all__ = ["Throughput", "measured_throughput", "served_faster"]

_IDLE_RESOURCES = ("gpu", "cpu", "ram")


@dataclass(frozen=True)
class Throughput:
    """One model's throughput in the month and in the what-if, and its namespace's GPU-hours."""

    model: str
    namespace: str
    tokens: int
    share: float  # s: the model's part of its namespace's cost
    gpu_hours: float  # H: the namespace's GPU-hours in the month
    measured: float  # T0, tokens a second per GPU
    asked: float  # T1

    @property
    def held(self) -> float:
        """The GPU-hours the model's share of its namespace held in the month."""
        return self.share * self.gpu_hours

    @property
    def needed(self) -> float:
        """The GPU-hours the same tokens take at the asked throughput."""
        return self.held * self.measured / self.asked


def measured_throughput(
    key: str,
    model: str,
    served: tuple[str, frozenset[str]],
    asked: float,
    month: AllocationSet,
    before: Chargeback,
) -> Throughput:
    """The month's throughput of a self-hosted model, or WhatIfError naming what is missing.

    `served` is its namespace and every self-hosted model the config serves there.
    """
    namespace, here = served
    costs = {m.model: m for m in before.units.models}
    own = costs.get(model)
    if own is None or own.tokens <= 0:
        raise WhatIfError(f"--what-if {key}: {model} served no tokens in the month")
    if own.measured is None or own.measured <= 0:
        raise WhatIfError(f"--what-if {key}: {model}'s serving cost is not known in the month")
    hours = sum(a.gpu_hours for a in month.allocations if a.namespace == namespace)
    if hours <= 0:
        raise WhatIfError(f"--what-if {key}: {namespace} used no GPU-hours in the month")
    # Only the models the namespace serves: another namespace's model shares none of its cost.
    total = sum(m.measured or 0.0 for m in before.units.models if m.model in here)
    share = own.measured / total if total > 0 else 1.0
    measured = own.tokens / (share * hours * 3_600.0)
    return Throughput(model, namespace, own.tokens, share, hours, measured, asked)


def served_faster(
    key: str, month: AllocationSet, namespace: str, changes: Sequence[Throughput]
) -> AllocationSet:
    """The month with a namespace scaled to its models' asked throughputs; the difference idle.

    Each model moves its own share of the namespace, so two models served there scale it by
    g = 1 - sum of s x (1 - T0 / T1). WhatIfError when serving slower would need more of a
    resource than the month left idle.
    """
    g = 1.0 - sum(c.share * (1.0 - c.measured / c.asked) for c in changes)
    freed: dict[str, float] = dict.fromkeys(_IDLE_RESOURCES, 0.0)
    allocations = []
    for a in month.allocations:
        if a.namespace != namespace:
            allocations.append(a)
            continue
        for resource in _IDLE_RESOURCES:
            freed[resource] += a.costs.get(resource, 0.0) * (1.0 - g)
        allocations.append(_scaled(a, g))
    idle = dict(month.idle)
    for resource, amount in freed.items():
        if amount:
            idle[resource] = idle.get(resource, 0.0) + amount
    short = sorted(r for r, v in idle.items() if v < 0 and freed.get(r, 0.0) < 0)
    if short:
        need = changes[0].gpu_hours * (g - 1.0)
        raise WhatIfError(
            f"--what-if {key}: at that throughput the month's tokens need {need:,.1f} more "
            f"GPU-hours in {namespace} than the month left idle ({', '.join(short)})"
        )
    return replace(month, allocations=tuple(allocations), idle=idle)


def _scaled(a: Allocation, g: float) -> Allocation:
    """The allocation with the resources it holds while serving scaled; its storage, network
    and the rest stay: they are not held by the hour of serving, and nothing takes them."""
    return Allocation(
        a.name,
        a.namespace,
        a.node,
        a.labels,
        a.namespace_labels,
        _times(a.costs, g),
        a.gpu_hours * g,
        a.gpu_model,
        _times(a.usage, g),
        a.annotations,
        a.namespace_annotations,
    )


def _times(values: Mapping[str, float], g: float) -> dict[str, float]:
    return {k: v * g if k in _IDLE_RESOURCES else v for k, v in values.items()}
