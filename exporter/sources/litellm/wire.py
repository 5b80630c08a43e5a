"""LiteLLM's wire conventions: page-numbered lists, money, timestamps and shape errors."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamTooLarge
from exporter.sources.checks import MAX_COST, MISSING_FIELD, BadRecord, number
from exporter.sources.http import get_json, get_text

__all__ = [
    "SOURCE",
    "money",
    "parse_timestamp",
    "read_pages",
    "read_text_pages",
    "shape",
    "spend",
]

SOURCE = "litellm"
# A proxy that keeps announcing more pages must not loop us forever: 2000 pages is 200k teams,
# or two million raw daily rows at the default page size.
_MAX_PAGES = 2000
_FRACTION = re.compile(r"(\.\d{6})\d+")
_T = TypeVar("_T")


def parse_timestamp(value: object) -> datetime | None:
    """Parse LiteLLM's timestamps leniently: `Z`, `+00:00` or naive (UTC), any fraction digits."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UpstreamPayloadError(f"{SOURCE}: expected a timestamp string, got {value!r}"[:200])
    text = _FRACTION.sub(r"\1", value.strip())
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise UpstreamPayloadError(f"{SOURCE}: bad timestamp {value!r}"[:200]) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def read_pages(
    client: httpx.Client, path: str, params: Mapping[str, str], *, top: bool
) -> Iterator[dict[str, Any]]:
    """Yield pages until `page >= total_pages` (top level on the team list, in `metadata` else).

    A proxy may announce one page more while we read (a row was added), never more than that:
    the first page's count plus one bounds the read, and so does _MAX_PAGES.
    """

    def page(number: int) -> tuple[dict[str, Any], object]:
        body = get_json(client, SOURCE, path, {**params, "page": str(number)})
        if not isinstance(body, dict):
            raise shape(path, "a JSON object", body)
        return body, body if top else body.get("metadata")

    yield from _paged(path, page)


def read_text_pages(
    client: httpx.Client,
    path: str,
    params: Mapping[str, str],
    decode: Callable[[str], Mapping[str, Any] | None],
) -> int:
    """Read pages as text, each handed to `decode`, which returns its paging `metadata`.

    The same page bounds as read_pages; returns the number of pages read.
    """

    def page(number: int) -> tuple[None, object]:
        return None, decode(get_text(client, SOURCE, path, {**params, "page": str(number)}))

    return sum(1 for _ in _paged(path, page))


def _paged(path: str, page: Callable[[int], tuple[_T, object]]) -> Iterator[_T]:
    number, budget = 1, _MAX_PAGES
    while True:
        body, paging = page(number)
        yield body
        total = paging.get("total_pages") if isinstance(paging, Mapping) else None
        if not isinstance(total, int) or isinstance(total, bool):
            raise shape(path, "an integer total_pages", total)
        if number == 1:
            if total > _MAX_PAGES:
                # Refused at the first page: reading up to the cap would ask for it in vain.
                raise UpstreamTooLarge(
                    f"{SOURCE}: {path} announces {total} pages, more than the {_MAX_PAGES} "
                    "a refresh reads"
                )
            budget = max(total, 1) + 1
        if number >= total:
            if isinstance(paging, Mapping) and paging.get("has_more") is True:
                raise UpstreamIncomplete(f"{SOURCE}: {path}: last page {number} says has_more")
            return
        if number >= budget:
            raise UpstreamIncomplete(
                f"{SOURCE}: {path} kept announcing more pages (now {total}) after {number}"
            )
        number += 1


def money(item: Mapping[str, Any], key: str) -> float | None:
    # Spend and budgets are never negative; None (null) is "not set", never 0.
    value = item.get(key)
    return None if value is None else number(value, key, low=0.0, high=MAX_COST)


def spend(item: Mapping[str, Any], key: str = "spend") -> float | None:
    """A spend: absent is unknown (an older proxy sends none); a `null` one is a bad record.

    LiteLLM writes every spend it tracks as a number (0.0 before any use), so a `null` is a
    broken row, and reading it as zero or as "not set" would serve a total without it.
    """
    if key in item and item[key] is None:
        raise BadRecord(MISSING_FIELD, f"{key} is null")
    return money(item, key)


def shape(path: str, expected: str, got: object) -> UpstreamPayloadError:
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return UpstreamPayloadError(f"{SOURCE}: {path}: expected {expected}, got {shown}")
