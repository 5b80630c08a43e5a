"""Routing LiteLLM usage: each record's team and model declaration, in a fixed summing order.

Models are named as teams call them: LiteLLM's `model_group` (the public `model_name`), which
every series carries. A declaration `llm_models[].model` matches that name, or the provider
model of one deployment behind it (LiteLLM's `model`), which wins: one public name can be
served by a self-hosted deployment and an external one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from exporter.config.schema import ModelDecl
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.sources.litellm.snapshot import ModelUsage, TeamBudget

__all__ = [
    "Routed",
    "declaration",
    "route",
    "route_order",
    "team_of",
    "usage_order",
    "weighted_tokens",
]


def weighted_tokens(prompt: float, completion: float, weight: float) -> float:
    """Tokens weighted by cost to serve: prompt + weight x completion."""
    return prompt + weight * completion


def team_of(record: ModelUsage | TeamBudget, attributor: Attributor) -> str:
    """The team a LiteLLM record's team (or key alias) maps to."""
    if record.team_id is None:
        return UNALLOCATED  # LiteLLM's "Unassigned": a key that belongs to no team
    return attributor.team_for_litellm(record.team_id, record.alias)


@dataclass(frozen=True)
class Routed:
    """Usage records in the order they are summed in, each with its team and its declaration.

    It depends on the snapshot, the declarations and the attributor only: a join keeps it per
    LiteLLM snapshot and routes each record once, not once per window and per rebuild. Three
    columns rather than a row tuple per record: a refresh that keeps the routing (`Layout`)
    keeps the teams and declarations as they are and makes no 50,000 new tuples.
    """

    records: tuple[ModelUsage, ...]
    teams: tuple[str, ...]
    decls: tuple[ModelDecl | None, ...]

    @property
    def rows(self) -> Iterator[tuple[ModelUsage, str, ModelDecl | None]]:
        """Each record with its team and declaration, in summing order."""
        return zip(self.records, self.teams, self.decls, strict=True)


def route(
    usage: Iterable[ModelUsage], models: tuple[ModelDecl, ...], attributor: Attributor
) -> Routed:
    """Sort the records and find each one's team and declaration."""
    declared = {m.model: m for m in models}
    ordered = tuple(sorted(usage, key=usage_order))
    return Routed(
        ordered,
        tuple(team_of(r, attributor) for r in ordered),
        tuple(declaration(r, declared) for r in ordered),
    )


def route_order(usage: Sequence[ModelUsage]) -> list[int]:
    """The records' positions in the order `route` sums them (the sort is stable, as there)."""
    return sorted(range(len(usage)), key=lambda i: usage_order(usage[i]))


def usage_order(record: ModelUsage) -> tuple[str, str, str, str]:
    """The order usage records are summed in: float sums never depend on the proxy's order."""
    return (record.model, record.deployment, record.team_id or "", record.alias or "")


def declaration(record: ModelUsage, declared: Mapping[str, ModelDecl]) -> ModelDecl | None:
    """The declaration of a record's model: by its deployment's provider model, else its name."""
    if record.deployment and record.deployment in declared:
        return declared[record.deployment]
    return declared.get(record.model)
