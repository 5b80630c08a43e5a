"""Team x model from one unfiltered daily read, joined through the API-key sub-breakdowns.

LiteLLM's daily breakdowns are one-dimensional (`entities` per team, `models` per provider
model, `model_groups` per public name), but each carries an `api_key_breakdown`, and a key's
rows are the same rows in all three. So per date and key we know which teams used the key
(from `entities`, i.e. the rows' own team_id), which provider models and which groups; crossing
them gives team x group x provider model without one read per model.

What is exact and what is approximated, per date and key:

- A key used by one team that day (LiteLLM keys belong to one team; the usual case): all its
  model use is that team's. Exact. A key two teams used the same day (it moved team) with one
  model: each team's share is its own figure under the key. Exact.
- A key two teams used the same day *and* with several models: each team gets each model's
  use in proportion to its share of the key, metric by metric. Approximated (the breakdowns do
  not say which team sent which model through that key that day).
- A key under no team entry (not seen with a real proxy) goes to the team its key metadata
  names (the key table now), else to Unassigned.
- Public names: a key-day with one provider model gives each of its groups to that model, and
  one group takes all its models; exact. With several of both, a model pairs with the group of
  identical counts; a model left unpaired, or a split that does not add up (a proxy without
  per-group metrics), is named after the provider model, as the per-model read does.
- Rows without an API key (LiteLLM's PTU flat-cost rows) are in no key breakdown and so in no
  team x model figure; their spend is not usage of a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from exporter.sources.litellm.daily import UNASSIGNED, ZERO, UsageMetrics
from exporter.sources.litellm.decode import Cell

__all__ = ["DayUsage", "Use", "day_usage", "has_key_breakdowns", "split"]

Use = tuple[str, str, str]  # (entity, public name, provider model)
DayUsage = dict[Use, UsageMetrics]


def has_key_breakdowns(table: Mapping[str, Mapping[str, Cell]]) -> bool:
    """Whether a date's team and model entries name their keys (older proxies' do not)."""
    cells = [*table.get("entities", {}).values(), *table.get("models", {}).values()]
    return all(cell.keys for cell in cells if cell.metrics != ZERO)


def day_usage(table: Mapping[str, Mapping[str, Cell]]) -> DayUsage:
    """One date's use per (team entity, public name, provider model), from its breakdowns."""
    models = _by_key(table.get("models", {}))
    groups = _by_key(table.get("model_groups", {}))
    teams = _by_key(table.get("entities", {}))
    owners = _owners(table.get("models", {}))
    out: DayUsage = {}
    for key in sorted(models):
        pairs = _pairs(models[key], groups.get(key, {}))
        users = teams.get(key) or {owners.get(key, UNASSIGNED): ZERO}
        for (group, model), metrics in pairs.items():
            if len(users) == 1:  # one team used the key: all of it is that team's
                parts: Iterable[tuple[str, UsageMetrics]] = [(next(iter(users)), metrics)]
            else:
                parts = split(metrics, users).items()
            for entity, part in parts:
                use = (entity, group, model)
                before = out.get(use)
                out[use] = part if before is None else before.plus(part)
    return out


def _by_key(cells: Mapping[str, Cell]) -> dict[str, dict[str, UsageMetrics]]:
    """key -> name -> metrics, inverted from name -> key -> metrics."""
    out: dict[str, dict[str, UsageMetrics]] = {}
    for name in sorted(cells):
        for key, metrics in cells[name].keys.items():
            out.setdefault(key, {})[name] = metrics
    return out


def _owners(cells: Mapping[str, Cell]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in sorted(cells):
        for key, owner in cells[name].owners.items():
            out.setdefault(key, owner)
    return out


def _pairs(
    models: Mapping[str, UsageMetrics], groups: Mapping[str, UsageMetrics]
) -> dict[tuple[str, str], UsageMetrics]:
    """(public name, provider model) -> metrics for one key on one date."""
    named = {g: m for g, m in groups.items() if g}
    if len(models) == 1 and named:
        model, metrics = next(iter(models.items()))
        if _counts(_sum(named.values())) == _counts(metrics):
            return {(g, model): named[g] for g in sorted(named) if named[g] != ZERO}
    if len(named) == 1 and len(models) > 1:
        group, metrics = next(iter(named.items()))
        if _counts(_sum(models.values())) == _counts(metrics):
            return {(group, m): models[m] for m in sorted(models)}
    by_counts: dict[tuple[int, int, int], list[str]] = {}
    for g in sorted(named) if len(models) > 1 else ():
        m = named[g]  # _counts, inlined: this runs for every key, group and date
        by_counts.setdefault((m.prompt_tokens, m.completion_tokens, m.requests), []).append(g)
    out: dict[tuple[str, str], UsageMetrics] = {}
    for model in sorted(models):
        m = models[model]
        match = by_counts.get((m.prompt_tokens, m.completion_tokens, m.requests))
        group = match.pop() if match is not None and len(match) == 1 else model
        out[(group, model)] = m
    return out


def split(total: UsageMetrics, weights: Mapping[str, UsageMetrics]) -> dict[str, UsageMetrics]:
    """`total` shared among `weights`' names, each metric in proportion to that metric.

    Counts are shared by largest remainder, so the parts add up to the total exactly; a single
    name, or weights equal to the total, gives exact parts.
    """
    if len(weights) == 1:  # one team used the key: the usual case, exact
        return dict.fromkeys(weights, total)
    names = sorted(weights)
    spend = _share_spend(total.spend, [weights[n].spend for n in names])
    prompt = _share(total.prompt_tokens, [weights[n].prompt_tokens for n in names])
    completion = _share(total.completion_tokens, [weights[n].completion_tokens for n in names])
    requests = _share(total.requests, [weights[n].requests for n in names])
    return {
        n: UsageMetrics(spend[i], prompt[i], completion[i], requests[i])
        for i, n in enumerate(names)
    }


def _share(total: int, weights: list[int]) -> list[int]:
    base = sum(weights)
    if base == 0:
        weights, base = [1] * len(weights), len(weights)
    exact = [total * w / base for w in weights]
    parts = [int(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: (parts[i] - exact[i], i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def _share_spend(total: float | None, weights: list[float | None]) -> list[float | None]:
    if total is None:
        return [None] * len(weights)
    known = [w or 0.0 for w in weights]
    base = sum(known)
    if base <= 0.0:
        return [total / len(weights)] * len(weights)
    return [total * w / base for w in known]


def _sum(parts: Iterable[UsageMetrics]) -> UsageMetrics:
    total = ZERO
    for part in parts:
        total = total.plus(part)
    return total


def _counts(m: UsageMetrics) -> tuple[int, int, int]:
    # Counts are whole numbers and must match exactly; spend is a float sum and is not compared.
    return (m.prompt_tokens, m.completion_tokens, m.requests)
