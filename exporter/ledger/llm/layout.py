"""Where each LiteLLM usage record goes in the join: its summing order, team, declaration, group.

None of it reads a record's figures, only its use (team id, alias, public name, provider model),
the attributor and the declarations. A steady refresh re-reads today's date alone, which moves
figures but seldom adds a use: the layout is kept and the figures are summed again along it.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter, eq

from exporter.config.schema import ModelDecl
from exporter.ledger.attribution import Attributor
from exporter.ledger.llm.routing import Routed, declaration, route_order, team_of
from exporter.ledger.llm.usage import TeamModelUsage
from exporter.sources.litellm.snapshot import ModelUsage

__all__ = ["Layout"]

# What routes a record; its figures do not.
_USE = attrgetter("team_id", "alias", "model", "deployment")

Usage = Mapping[tuple[str, str], TeamModelUsage]


@dataclass(frozen=True)
class Layout:
    """The routing of one sequence of uses, under one attributor and one set of declarations.

    Positions are kept in arrays, not tuples of ints: at a thousand teams by fifty models the
    layout is 4.9 MiB so (most of it the keys, which the part's usage map shares), 12 MiB with
    an int object per row and a tuple per group.
    """

    attributor: Attributor  # held, compared by identity
    models: tuple[ModelDecl, ...]
    order: array[int]  # snapshot positions in summing order (`routing.usage_order`)
    teams: tuple[str, ...]  # per routed row
    decls: tuple[ModelDecl | None, ...]  # per routed row
    keys: tuple[tuple[str, str], ...]  # each (team, public name), sorted
    rows: array[int]  # the routed rows of each key in turn, in summing order
    ends: array[int]  # where each key's rows end in `rows`

    @classmethod
    def of(
        cls, usage: Sequence[ModelUsage], attributor: Attributor, models: tuple[ModelDecl, ...]
    ) -> Layout:
        """Route every record, as `routing.route` does, and group the rows by team and model."""
        order = route_order(usage)
        declared = {m.model: m for m in models}
        records = [usage[i] for i in order]
        teams = tuple(team_of(r, attributor) for r in records)
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for row, (record, team) in enumerate(zip(records, teams, strict=True)):
            groups[(team, record.model)].append(row)
        keys = tuple(sorted(groups))
        ends = array("l", accumulate(len(groups[key]) for key in keys))
        return cls(
            attributor,
            models,
            array("l", order),
            teams,
            tuple(declaration(r, declared) for r in records),
            keys,
            array("l", [row for key in keys for row in groups[key]]),
            ends,
        )

    def fits(
        self,
        usage: Sequence[ModelUsage],
        attributor: Attributor,
        models: tuple[ModelDecl, ...],
        routed: Routed,
    ) -> bool:
        """Whether these records route as `routed`, the records this layout last routed."""
        if self.attributor is not attributor or self.models is not models:
            return False
        if len(usage) != len(routed.records):
            return False
        # Use by use, in summing order, against the records routed last (held by the last part
        # anyway): no copy of 50,000 uses kept, and no list of them made to compare.
        ordered = map(usage.__getitem__, self.order)
        return all(map(eq, map(_USE, ordered), map(_USE, routed.records)))

    def routed(self, usage: Sequence[ModelUsage]) -> Routed:
        """The records routed: what `routing.route` gives for them."""
        return Routed(tuple(map(usage.__getitem__, self.order)), self.teams, self.decls)

    def sums(self, routed: Routed, before: Usage | None) -> Usage:
        """Use per (team, model), as `usage.team_model_usage` sums it (the same additions in the
        same order); an unchanged figure keeps `before`'s object, all unchanged keep `before`."""
        records, rows, out = routed.records, self.rows, {}
        kept = before is not None and len(before) == len(self.keys)
        start = 0
        for key, end in zip(self.keys, self.ends, strict=True):
            spend: float | None = 0.0
            prompt = completion = requests = 0
            for k in range(start, end):
                record = records[rows[k]]
                spend = None if spend is None or record.spend is None else spend + record.spend
                prompt += record.prompt_tokens
                completion += record.completion_tokens
                requests += record.requests
            start = end
            old = None if before is None else before.get(key)
            if old is not None and _same(old, spend, prompt, completion, requests):
                out[key] = old
            else:
                out[key] = TeamModelUsage(spend, prompt, completion, requests)
                kept = False
        return before if kept and before is not None else out


def _same(old: TeamModelUsage, spend: float | None, prompt: int, completion: int, n: int) -> bool:
    # A sum that starts at 0.0 is never -0.0 and validated spend is never NaN: == is exact here.
    return (old.spend, old.prompt_tokens, old.completion_tokens, old.requests) == (
        spend,
        prompt,
        completion,
        n,
    )
