"""What each team consumed this month, in the units it is charged for, per component and resource.

Quantities are what OpenCost and LiteLLM measured, in their units: GPU-hours, core-hours,
byte-hours of memory and volumes, bytes sent, tokens. For the GPU and LLM components the same is
kept per resource (the GPU model a team's GPU-hours ran on, the LLM model its tokens went to),
with each resource's weight in the cell: what it cost the team in the month:

- `gpu`: the GPU cost of the team's allocations on that model;
- `llm_external`: LiteLLM's spend on that model;
- `llm_serving`: the model's measured cost per weighted token times the team's weighted tokens
  (exactly how the serving cost was moved onto the team).

Everything is placed as the cost was (the month window's own lines, placed once) and counted
under `__other__` for a team the cap folded, as the ledgers are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from exporter.ledger.attribution import OTHER
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.window import Window, gpu_hours_by_team
from exporter.ledger.llm import ModelPricing, TeamModelUsage, weighted_tokens

__all__ = ["NO_RESOURCE", "Consumption", "ResourceKey", "consumption"]

NO_RESOURCE = ""  # a part of a cell whose resource is not known (a GPU without a model)
ResourceKey = tuple[str, str, str]  # (team, component, resource name)


@dataclass(frozen=True)
class Consumption:
    """The month's quantities per (team, component), and weights and quantities per resource."""

    quantities: Mapping[tuple[str, str], float] = field(default_factory=dict)
    resource_costs: Mapping[ResourceKey, float] = field(default_factory=dict)
    resource_quantities: Mapping[ResourceKey, float] = field(default_factory=dict)


def consumption(
    month: Window,
    usage: Mapping[tuple[str, str], TeamModelUsage],
    pricing: tuple[ModelPricing, ...],
    served: Collection[str],
    weight: float,
    folded: Collection[str] = (),
) -> Consumption:
    """The month's consumption; `served` are the self-hosted models' public names, `weight` the
    configured completion weight, `folded` the teams the cap counts under `__other__`."""

    def counted_as(team: str) -> str:
        return OTHER if team in folded else team

    quantities: dict[tuple[str, str], float] = defaultdict(float)
    costs: dict[ResourceKey, float] = defaultdict(float)
    per_resource: dict[ResourceKey, float] = defaultdict(float)
    lines, allocations = month.lines, month.allocations
    for name, used in sorted(gpu_hours_by_team(lines, allocations).items()):
        quantities[(counted_as(name), Component.GPU.value)] += used
    for line, a in zip(lines, allocations.allocations, strict=True):
        team = counted_as(line.placement.team)
        for component, amount in a.usage.items():
            quantities[(team, component)] += amount
        if a.gpu_hours or a.costs.get(Component.GPU, 0.0):
            key = (team, Component.GPU.value, a.gpu_model or NO_RESOURCE)
            costs[key] += a.costs.get(Component.GPU, 0.0)
            per_resource[key] += a.gpu_hours
    measured = {p.model: p.measured for p in pricing}
    own = {p.model: p.weight for p in pricing}
    for (name, model), use in sorted(usage.items()):
        team, tokens = counted_as(name), use.prompt_tokens + use.completion_tokens
        if model in served:
            key = (team, Component.LLM_SERVING.value, model)
            w = weighted_tokens(use.prompt_tokens, use.completion_tokens, own.get(model, weight))
            costs[key] += measured.get(model, 0.0) * w
        else:
            key = (team, Component.LLM_EXTERNAL.value, model)
            costs[key] += use.spend or 0.0
        quantities[(team, key[1])] += tokens
        per_resource[key] += tokens
    return Consumption(dict(quantities), dict(costs), dict(per_resource))
