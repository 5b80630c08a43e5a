"""FOCUS rows per resource: a team's GPU and LLM cells split by GPU model and LLM model.

A resource is what a charge is for, as FOCUS 1.2 ResourceId means it: the GPU model a team's
GPU-hours ran on (OpenCost's gpuAllocation.gpuModel) and the LLM model (its public name in
LiteLLM) a team's tokens went to. Weights are what each resource cost the team in the month, as
the ledger's consumption gives them (`ledger.costs.consumption`).

A cell is split over its resources by those weights with largest remainder, so the resource
rows add up to the cell; a part with no known resource (a GPU without a model, a serving team's
credit when it sent no tokens itself) is one row with a null ResourceId.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from exporter.finance.report.footing import largest_remainder
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.consumption import NO_RESOURCE

__all__ = [
    "NO_RESOURCE",
    "RESOURCE_COMPONENTS",
    "Resource",
    "resource",
    "split",
]


@dataclass(frozen=True)
class Resource:
    """How one resource is named in FOCUS: ResourceId, ResourceName and ResourceType."""

    id: str
    name: str
    type: str


# ResourceId SHOULD be fully qualified and unique within the provider (columns/resourceid.md);
# the prefix also keeps ResourceName (the bare model name) from duplicating it.
_KINDS: Mapping[str, tuple[str, str]] = {
    Component.GPU: ("gpu-model", "GPU Model"),
    Component.LLM_SERVING: ("llm-model", "LLM Model"),
    Component.LLM_EXTERNAL: ("llm-model", "LLM Model"),
}
RESOURCE_COMPONENTS = frozenset(_KINDS)


def resource(component: str, name: str) -> Resource | None:
    """The FOCUS resource of a component's part; None when the part has no known resource."""
    if name == NO_RESOURCE or component not in _KINDS:
        return None
    prefix, kind = _KINDS[component]
    return Resource(f"{prefix}/{name}", name, kind)


def split(cents: int, names: Sequence[str], weights: Sequence[Decimal]) -> dict[str, int]:
    """Split a cell's cents over its resources by weight; the shares add up to `cents`.

    Weights are costs (never negative in a month); when they add up to nothing the cell is
    split evenly, as nothing says one resource cost more than another.
    """
    if not names:
        return {}
    total = sum(weights, Decimal(0))
    if total <= 0 or any(w < 0 for w in weights):
        weights, total = [Decimal(1)] * len(names), Decimal(len(names))
    # Equal weights give equal exact shares, so the first resources take the spare cents.
    exact = [Decimal(cents) * w / total for w in weights]
    return dict(zip(names, largest_remainder(exact, cents), strict=True))
