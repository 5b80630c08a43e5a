"""LiteLLM's daily-activity tables: pages merged by date, totals, and the split by model group."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from exporter.sources.checks import MISSING_FIELD, WRONG_TYPE, BadRecord, Tally, count, label
from exporter.sources.litellm.wire import shape, spend

__all__ = [
    "DAILY",
    "UNASSIGNED",
    "ZERO",
    "Merged",
    "Totals",
    "UsageMetrics",
    "by_group",
    "merge_daily_pages",
    "metrics_of",
    "total_over_dates",
]

DAILY = "/team/daily/activity"
UNASSIGNED = "Unassigned"  # LiteLLM's entity name for rows whose team_id is NULL


class UsageMetrics(msgspec.Struct, frozen=True, gc=False):
    """Summed daily metrics; `spend` is None when the proxy did not report it."""

    # A struct, not a dataclass: a month of a thousand teams x fifty models builds millions,
    # and a frozen dataclass's __init__ costs several times a struct's.

    spend: float | None
    prompt_tokens: int
    completion_tokens: int
    requests: int

    def plus(self, other: UsageMetrics) -> UsageMetrics:
        """The sum of two metric sets; an unknown spend stays unknown."""
        spend = None if self.spend is None or other.spend is None else self.spend + other.spend
        return UsageMetrics(
            spend,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
        )


ZERO = UsageMetrics(0.0, 0, 0, 0)


Totals = dict[str, tuple[UsageMetrics, str | None]]
Merged = dict[str, dict[str, Totals]]


def by_group(
    reader: Callable[[str | None, str | None], Merged],
    model: str,
    entities: Totals,
    groups: Totals,
) -> Iterator[tuple[str, str, UsageMetrics]]:
    """(entity, public name, metrics) for one provider model's usage, every entity once or more.

    When a split does not add up to the entity's tokens and requests (a proxy that gives no
    metrics per group), that entity's use is named after the provider model instead.
    """
    names = sorted(g for g in groups if g)
    if len(names) <= 1:
        public = names[0] if names else model
        for entity in sorted(entities):
            yield entity, public, entities[entity][0]
        return
    split: dict[str, dict[str, UsageMetrics]] = {}
    for entity in sorted(e for e in entities if e != UNASSIGNED):
        per_group = total_over_dates(reader(model, entity), "model_groups")
        split[entity] = {g: m for g, (m, _) in per_group.items() if g}
    if UNASSIGNED in entities:
        split[UNASSIGNED] = {
            g: _minus(groups[g][0], [split[e].get(g, ZERO) for e in sorted(split)]) for g in names
        }
    for entity in sorted(split):
        parts = split[entity]
        if not _same_counts(_sum(parts[g] for g in sorted(parts)), entities[entity][0]):
            yield entity, model, entities[entity][0]
            continue
        for group in sorted(parts):
            if parts[group] != ZERO:
                yield entity, group, parts[group]


def _sum(parts: Iterable[UsageMetrics]) -> UsageMetrics:
    total = ZERO
    for part in parts:
        total = total.plus(part)
    return total


def _minus(total: UsageMetrics, parts: list[UsageMetrics]) -> UsageMetrics:
    """What `parts` leave of `total`; counts never below zero, spend unknown if any is."""
    taken = _sum(parts)
    spend = None if total.spend is None or taken.spend is None else total.spend - taken.spend
    return UsageMetrics(
        None if spend is None else max(spend, 0.0),
        max(total.prompt_tokens - taken.prompt_tokens, 0),
        max(total.completion_tokens - taken.completion_tokens, 0),
        max(total.requests - taken.requests, 0),
    )


def _same_counts(a: UsageMetrics, b: UsageMetrics) -> bool:
    # Counts are integers, so they must match exactly; spend is a float sum and is not compared.
    return (a.prompt_tokens, a.completion_tokens, a.requests) == (
        b.prompt_tokens,
        b.completion_tokens,
        b.requests,
    )


def merge_daily_pages(pages: list[Any], tally: Tally | None = None) -> Merged:
    """Merge daily-activity pages by date: date -> breakdown -> key -> (metrics, alias), summed.

    The paged endpoint cuts through raw rows, so one date can come back on two pages with part
    of its rows on each; overwriting would lose the first part. A breakdown entry with a bad
    metric is dropped and counted in `tally`.
    """
    tally = Tally() if tally is None else tally
    merged: Merged = {}
    for body in pages:
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise shape(DAILY, "a list under 'results'", results)
        for day in results:
            if not isinstance(day, dict) or not isinstance(day.get("date"), str):
                raise shape(DAILY, "a result with a string date", day)
            breakdown = day.get("breakdown", {})
            if not isinstance(breakdown, dict):
                raise shape(DAILY, "an object under 'breakdown'", breakdown)
            into = merged.setdefault(day["date"], {})
            for kind in ("entities", "models"):
                _merge_breakdown(into.setdefault(kind, {}), breakdown.get(kind, {}), tally)
            # Older proxies have no model_groups, or entries without metrics: the names still
            # count, and a missing group is no dropped record.
            groups = breakdown.get("model_groups") or {}
            _merge_breakdown(into.setdefault("model_groups", {}), groups, tally, names_only=True)
    return merged


def _merge_breakdown(
    into: dict[str, tuple[UsageMetrics, str | None]],
    part: object,
    tally: Tally,
    *,
    names_only: bool = False,
) -> None:
    if not isinstance(part, dict):
        raise shape(DAILY, "an object per breakdown", part)
    for key, entry in part.items():
        try:
            label(key, "a breakdown entry's name")  # a team id or a model: a label value
            if not isinstance(entry, dict):
                raise BadRecord(WRONG_TYPE, f"breakdown entry {key!r} is not an object")
            metadata = entry.get("metadata")
            alias = metadata.get("team_alias") if isinstance(metadata, dict) else None
            alias = (
                label(alias, f"entry {key[:60]!r}: team_alias") if isinstance(alias, str) else None
            )
            metrics = metrics_of(entry.get("metrics"))
        except BadRecord as exc:
            if names_only and exc.reason == MISSING_FIELD:
                into.setdefault(key, (ZERO, None))  # a group without metrics: its name counts
            else:
                tally.drop(exc)
            continue
        before, known = into.get(key, (ZERO, None))
        into[key] = (before.plus(metrics), known or alias)


def total_over_dates(merged: Merged, kind: str) -> Totals:
    """One breakdown kind summed over every date, in date order."""
    totals: dict[str, tuple[UsageMetrics, str | None]] = {}
    for day in sorted(merged):
        for key, (metrics, alias) in merged[day].get(kind, {}).items():
            before, known = totals.get(key, (ZERO, None))
            totals[key] = (before.plus(metrics), known or alias)
    return totals


def metrics_of(raw: object) -> UsageMetrics:
    """One breakdown entry's metrics, checked field by field (BadRecord names the reason)."""
    if not isinstance(raw, dict):
        raise BadRecord(MISSING_FIELD if raw is None else WRONG_TYPE, "breakdown metrics")
    return UsageMetrics(
        spend=spend(raw),
        prompt_tokens=count(raw.get("prompt_tokens"), "prompt_tokens"),
        completion_tokens=count(raw.get("completion_tokens"), "completion_tokens"),
        requests=count(raw.get("api_requests"), "api_requests"),
    )
