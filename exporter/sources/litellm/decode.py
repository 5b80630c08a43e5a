"""LiteLLM's daily-activity bodies decoded into typed per-date tables, validated while decoding.

A body is decoded by msgspec straight into structs whose fields carry the bounds of
exporter.sources.checks (whole non-negative counts below MAX_TOKENS, money in [0, MAX_COST)),
so a well-formed body is validated at C speed in one pass. A body with any bad record (a NaN,
a count spelled 3.0, a string where a number goes) fails that strict pass; it is then read
again record by record with the checks the rest of the exporter uses, so one bad breakdown
entry is dropped and counted by reason rather than failing the refresh.

Pages are summed into a `Days` table: date -> breakdown kind -> name -> Cell (the metrics, the
per-API-key metrics under it, and the team alias or key owner where LiteLLM names them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec

from exporter.sources.checks import MAX_COST, MAX_LABEL, MAX_TOKENS, BadRecord, Tally, label
from exporter.sources.litellm.daily import DAILY, ZERO, UsageMetrics, metrics_of
from exporter.sources.litellm.wire import shape

__all__ = ["KINDS", "Cell", "Days", "add_body", "decode_body"]

KINDS = ("entities", "models", "model_groups")

_Money = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_COST)]
_Count = Annotated[int, msgspec.Meta(ge=0, lt=MAX_TOKENS)]
# Team ids, aliases and model names become label values: bounded while decoding (msgspec
# refuses a lone surrogate outright; the lenient path checks each name with checks.label).
_Name = Annotated[str, msgspec.Meta(max_length=MAX_LABEL)]


class _Metrics(msgspec.Struct, gc=False):
    # Absent on older proxies: unknown, not zero. A `null` spend fails this strict pass, and the
    # record-by-record one drops it (wire.spend).
    spend: _Money | msgspec.UnsetType = msgspec.UNSET
    prompt_tokens: _Count | None = None
    completion_tokens: _Count | None = None
    api_requests: _Count | None = None


# Only the fields read: msgspec skips the rest of a metadata object without building it (a
# day of a thousand teams x fifty models has 100,000 key entries).
class _KeyMeta(msgspec.Struct, gc=False):
    team_id: _Name | None = None


class _EntryMeta(msgspec.Struct, gc=False):
    team_alias: _Name | None = None


class _Key(msgspec.Struct, gc=False):
    metrics: _Metrics
    metadata: _KeyMeta | None = None


class _Entry(msgspec.Struct):
    metrics: _Metrics
    metadata: _EntryMeta | None = None
    api_key_breakdown: dict[_Name, _Key] | None = None


class _Group(msgspec.Struct):
    # A model group's name counts even without metrics (older proxies send none).
    metrics: _Metrics | None = None
    api_key_breakdown: dict[_Name, _Key] | None = None


class _Breakdown(msgspec.Struct):
    entities: dict[_Name, _Entry] = {}
    models: dict[_Name, _Entry] = {}
    model_groups: dict[_Name, _Group] | None = None


class _Day(msgspec.Struct):
    date: str
    breakdown: _Breakdown = msgspec.field(default_factory=_Breakdown)


class _Body(msgspec.Struct):
    results: list[_Day]
    metadata: dict[str, Any] | None = None


@dataclass
class Cell:
    """One breakdown entry of one date, summed over pages.

    `owner` is the team id a key's metadata names (the key's team *now*, per the key table).
    """

    metrics: UsageMetrics = ZERO
    keys: dict[str, UsageMetrics] = field(default_factory=dict)
    alias: str | None = None
    owners: dict[str, str] = field(default_factory=dict)


Days = dict[str, dict[str, dict[str, Cell]]]

_DECODER = msgspec.json.Decoder(_Body)


def decode_body(text: str | bytes | bytearray, days: Days, tally: Tally) -> dict[str, Any] | None:
    """Add one body's dates to `days`; returns its `metadata` (paging) object.

    Raises UpstreamPayloadError for a body without the promised shape.
    """
    try:
        body = _DECODER.decode(text)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return _lenient(text, days, tally)
    # The body's bytes go before its tables are built (when the caller kept no reference),
    # and each date's structs as soon as they are added: a date of a thousand teams x fifty
    # models is 36 MB of JSON, and its structs and tables are as large again.
    del text
    results, body.results = body.results, []
    results.reverse()
    while results:
        day = results.pop()
        _add_typed(days.setdefault(day.date, _empty()), day.breakdown)
    return body.metadata


def add_body(body: Any, days: Days, tally: Tally) -> dict[str, Any] | None:
    """Add one already parsed body (any JSON value) to `days`, checking record by record."""
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        raise shape(DAILY, "a list under 'results'", results)
    for day in results:
        if not isinstance(day, dict) or not isinstance(day.get("date"), str):
            raise shape(DAILY, "a result with a string date", day)
        breakdown = day.get("breakdown", {})
        if not isinstance(breakdown, dict):
            raise shape(DAILY, "an object under 'breakdown'", breakdown)
        into = days.setdefault(day["date"], _empty())
        for kind in KINDS:
            part = breakdown.get(kind) if kind == "model_groups" else breakdown.get(kind, {})
            _add_loose(into[kind], part or {}, tally, names_only=kind == "model_groups")
    metadata = body.get("metadata")
    return metadata if isinstance(metadata, dict) else None


def _empty() -> dict[str, dict[str, Cell]]:
    return {kind: {} for kind in KINDS}


def _lenient(text: str | bytes | bytearray, days: Days, tally: Tally) -> dict[str, Any] | None:
    try:
        # Python's parser, unlike msgspec's, takes the NaN a Python proxy can put on the wire.
        body = json.loads(text)
    except json.JSONDecodeError:
        raise shape(DAILY, "a JSON body", text) from None
    return add_body(body, days, tally)


def _add_typed(into: dict[str, dict[str, Cell]], breakdown: _Breakdown) -> None:
    # Each part's structs are let go once its cells are built, so at most one part's
    # structs and cells are alive beside each other.
    entities, breakdown.entities = breakdown.entities, {}
    for name, entry in entities.items():
        alias = entry.metadata.team_alias if entry.metadata else None
        _merge(into["entities"], name, _typed(entry.metrics), entry.api_key_breakdown, alias)
    del entities
    models, breakdown.models = breakdown.models, {}
    for name, entry in models.items():
        _merge(into["models"], name, _typed(entry.metrics), entry.api_key_breakdown, None)
    del models
    groups, breakdown.model_groups = breakdown.model_groups or {}, None
    for name, group in groups.items():
        metrics = ZERO if group.metrics is None else _typed(group.metrics)
        _merge(into["model_groups"], name, metrics, group.api_key_breakdown, None)


def _typed(raw: _Metrics) -> UsageMetrics:
    spend = None if raw.spend is msgspec.UNSET else raw.spend
    return UsageMetrics(
        spend, raw.prompt_tokens or 0, raw.completion_tokens or 0, raw.api_requests or 0
    )


def _merge(
    cells: dict[str, Cell],
    name: str,
    metrics: UsageMetrics,
    keys: dict[str, _Key] | None,
    alias: str | None,
) -> None:
    cell = cells.get(name)
    if cell is None:
        cell = cells[name] = Cell()
        if keys:
            # A name's first page (nearly always its only one): its keys are built in one
            # pass rather than merged one by one into empty tables, to the same result.
            cell.keys = {key: _typed(entry.metrics) for key, entry in keys.items()}
            cell.owners = {
                key: owner
                for key, entry in keys.items()
                if entry.metadata is not None and (owner := entry.metadata.team_id)
            }
            keys = None
    cell.metrics = cell.metrics.plus(metrics)
    cell.alias = cell.alias or alias
    for key, entry in (keys or {}).items():
        owner = entry.metadata.team_id if entry.metadata else None
        _merge_key(cell, key, _typed(entry.metrics), owner)


def _merge_key(cell: Cell, key: str, metrics: UsageMetrics, owner: str | None) -> None:
    before = cell.keys.get(key)
    cell.keys[key] = metrics if before is None else before.plus(metrics)
    if owner and key not in cell.owners:
        cell.owners[key] = owner


def _text(metadata: object, name: str) -> str | None:
    """A string field of a loosely read metadata object; anything else reads as absent.

    A string that label() refuses is a BadRecord: it would name a team."""
    value = metadata.get(name) if isinstance(metadata, dict) else None
    return label(value, f"metadata.{name}") if isinstance(value, str) else None


def _add_loose(cells: dict[str, Cell], part: object, tally: Tally, *, names_only: bool) -> None:
    if not isinstance(part, dict):
        raise shape(DAILY, "an object per breakdown", part)
    for name, entry in part.items():
        try:
            label(name, "a breakdown entry's name")
            if not isinstance(entry, dict):
                raise BadRecord("wrong_type", f"breakdown entry {name!r} is not an object")
            alias = _text(entry.get("metadata"), "team_alias")
            metrics = metrics_of(entry.get("metrics"))
        except BadRecord as exc:
            if names_only and exc.reason == "missing_field":
                cells.setdefault(name, Cell())  # a group without metrics: its name counts
            else:
                tally.drop(exc)
            continue
        _merge(cells, name, metrics, None, alias)
        keys = entry.get("api_key_breakdown")
        for key, sub in (keys if isinstance(keys, dict) else {}).items():
            try:
                label(key, f"entry {name[:60]!r}: an API key")
                if not isinstance(sub, dict):
                    raise BadRecord("wrong_type", "an API key breakdown entry is not an object")
                owner = _text(sub.get("metadata"), "team_id")
                key_metrics = metrics_of(sub.get("metrics"))
            except BadRecord as exc:
                tally.drop(exc)
                continue
            _merge_key(cells[name], key, key_metrics, owner)
