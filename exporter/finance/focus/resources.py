"""FOCUS rows per resource: a team's GPU and LLM cells split by GPU model and LLM model.

A resource is what a charge is for, as FOCUS 1.2 ResourceId means it: the GPU model a team's
GPU-hours ran on (OpenCost's gpuAllocation.gpuModel) and the LLM model (its public name in
LiteLLM) a team's tokens went to. Weights are what each resource cost the team in the month:

- `gpu`: the GPU cost of the team's allocations on that model;
- `llm_external`: LiteLLM's spend on that model;
- `llm_serving`: the model's measured cost per weighted token times the team's weighted tokens
  (exactly how the serving cost was moved onto the team).

A cell is split over its resources by those weights with largest remainder, so the resource
rows add up to the cell; a part with no known resource (a GPU without a model, a serving team's
credit when it sent no tokens itself) is one row with a null ResourceId.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from exporter.config.schema import Config
from exporter.finance.report.footing import largest_remainder
from exporter.ledger.attribution import OTHER, Attributor
from exporter.ledger.costs.window import cost_lines
from exporter.ledger.llm import weighted_tokens
from exporter.ledger.result import Chargeback
from exporter.sources.opencost.source import AllocationSet

__all__ = [
    "NO_RESOURCE",
    "RESOURCE_COMPONENTS",
    "Resource",
    "ResourceFigures",
    "resource",
    "resource_figures",
    "split",
]

NO_RESOURCE = ""  # a part of a cell whose resource is not known: ResourceId is null
ResourceKey = tuple[str, str, str]  # (team, component, resource name)
ResourceFigures = Mapping[ResourceKey, float]


@dataclass(frozen=True)
class Resource:
    """How one resource is named in FOCUS: ResourceId, ResourceName and ResourceType."""

    id: str
    name: str
    type: str


# ResourceId SHOULD be fully qualified and unique within the provider (columns/resourceid.md);
# the prefix also keeps ResourceName (the bare model name) from duplicating it.
_KINDS: Mapping[str, tuple[str, str]] = {
    "gpu": ("gpu-model", "GPU Model"),
    "llm_serving": ("llm-model", "LLM Model"),
    "llm_external": ("llm-model", "LLM Model"),
}
RESOURCE_COMPONENTS = frozenset(_KINDS)


def resource(component: str, name: str) -> Resource | None:
    """The FOCUS resource of a component's part; None when the part has no known resource."""
    if name == NO_RESOURCE or component not in _KINDS:
        return None
    prefix, kind = _KINDS[component]
    return Resource(f"{prefix}/{name}", name, kind)


def resource_figures(
    config: Config, attributor: Attributor, chargeback: Chargeback, whole: AllocationSet
) -> tuple[dict[ResourceKey, float], dict[ResourceKey, float]]:
    """Month-to-date cost weights and quantities per (team, component, resource).

    Quantities are GPU-hours and tokens (prompt + completion), as the team-level rows have;
    teams folded into `__other__` by the join are folded here too.
    """
    folded = set(chargeback.folded_teams)

    def team(name: str) -> str:
        return OTHER if name in folded else name

    weights: dict[ResourceKey, float] = defaultdict(float)
    quantities: dict[ResourceKey, float] = defaultdict(float)
    for line, a in zip(cost_lines(whole, attributor), whole.allocations, strict=True):
        if a.gpu_hours or a.costs.get("gpu", 0.0):
            key = (team(line.placement.team), "gpu", a.gpu_model or NO_RESOURCE)
            weights[key] += a.costs.get("gpu", 0.0)
            quantities[key] += a.gpu_hours
    measured = {p.model: p.measured for p in chargeback.llm_pricing}
    own = {p.model: p.weight for p in chargeback.llm_pricing}
    served = measured.keys() | {m.model for m in config.llm_models if m.self_hosted is not None}
    weight = config.llm_completion_weight
    for (name, model), use in sorted(chargeback.llm_usage.items()):
        tokens = use.prompt_tokens + use.completion_tokens
        if model in served:
            key = (team(name), "llm_serving", model)
            w = weighted_tokens(use.prompt_tokens, use.completion_tokens, own.get(model, weight))
            weights[key] += measured.get(model, 0.0) * w
        else:
            key = (team(name), "llm_external", model)
            weights[key] += use.spend or 0.0
        quantities[key] += tokens
    return dict(weights), dict(quantities)


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
