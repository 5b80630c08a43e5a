"""What the two LLM providers' cost APIs share: an admin-key client, cursor paging, the refused
key explained, and a day's bucket checked against the month read.

Both answer `{data: [bucket...], has_more, next_page}`, a bucket being one UTC day with its
`results`; a later page is asked for with `page=<next_page>` (docs/sources/openai-costs.md,
docs/sources/anthropic-costs.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx

from exporter.config.bills import AnthropicCostsConfig, OpenAICostsConfig
from exporter.credentials import read_secret
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamStatusError
from exporter.redact import redact, register
from exporter.sources.bills.settings import DAY, BillWindow
from exporter.sources.checks import MAX_COST, NON_FINITE, OUT_OF_RANGE, WRONG_TYPE, BadRecord
from exporter.sources.clients import make_client
from exporter.sources.http import get_json

__all__ = ["MAX_PAGES", "admin_client", "amount", "bucket_day", "explained", "pages"]

# A month is at most 31 daily buckets; grouped results can spread them over more pages, but
# thousands of pages mean a cursor that never ends.
MAX_PAGES = 2000


def admin_client(
    cfg: OpenAICostsConfig | AnthropicCostsConfig,
    header: str,
    value: str,
    extra: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> httpx.Client:
    """The provider's client; `value` holds `{key}`, where the admin key goes in `header`.

    The key is registered for redaction before any request is made, whatever header carries
    it (the shared client registers only the usual credential headers).
    """
    key = read_secret(cfg.admin_key_env, cfg.admin_key_file).get_secret_value()
    register(f"{cfg.url} {header}", key)
    headers = {header: value.format(key=key), **(extra or {})}
    return make_client(
        cfg.url, cfg.timeout, headers=headers, ca_file=cfg.ca_file, transport=transport
    )


def pages(
    client: httpx.Client, source: str, path: str, params: Sequence[tuple[str, str]]
) -> Iterator[Mapping[str, Any]]:
    """Each page of a cursor-paged report, in order, until `has_more` is false.

    A page that says there is more without a cursor, or hands back a cursor already followed,
    would end the read short or loop: the read fails rather than publish part of a month.
    """
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        query = httpx.QueryParams([*params, *([("page", cursor)] if cursor else [])])
        body = get_json(client, source, path, query)
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            raise UpstreamPayloadError(f"{source}: {path} did not answer a page with `data`")
        yield body
        more, cursor = body.get("has_more"), body.get("next_page")
        if more is False or (more is None and not cursor):
            return
        if more is not True:
            raise UpstreamPayloadError(f"{source}: {path}: has_more is not true or false")
        if not isinstance(cursor, str) or not cursor:
            raise UpstreamIncomplete(f"{source}: {path} has more pages but gave no next_page")
        if cursor in seen:
            raise UpstreamIncomplete(f"{source}: {path} handed back page {cursor!r} again")
        seen.add(cursor)
    raise UpstreamIncomplete(f"{source}: {path} was still paging after {MAX_PAGES} pages")


def explained(exc: UpstreamStatusError, source: str) -> UpstreamStatusError:
    """A refused admin key said as such, the key never in the message."""
    if exc.status == 401:
        return UpstreamStatusError(f"{source}: admin key refused (401)", 401)
    if exc.status == 403:
        message = f"{source}: admin key refused (403): it lacks access to the cost report"
        return UpstreamStatusError(message, 403)
    return UpstreamStatusError(redact(str(exc)), exc.status)


def bucket_day(start: Any, end: Any, window: BillWindow, what: str) -> date:
    """The UTC day a bucket covers, when it is one whole day of the month read."""
    first, last = _instant(start, f"{what} start"), _instant(end, f"{what} end")
    if first.time() != datetime.min.time() or last - first != DAY:
        raise BadRecord(OUT_OF_RANGE, f"{what} is not one UTC day ({first} to {last})")
    day = first.date()
    if not window.holds(day):
        raise BadRecord(OUT_OF_RANGE, f"{what} {day} is outside {window.first}..{window.last}")
    return day


def _instant(value: Any, what: str) -> datetime:
    """Unix seconds (OpenAI) or RFC 3339 text (Anthropic), as an aware UTC instant."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise BadRecord(OUT_OF_RANGE, f"{what} {value} is not a time") from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise BadRecord(WRONG_TYPE, f"{what} {value[:40]!r} is not RFC 3339") from None
        if parsed.tzinfo is None:
            raise BadRecord(WRONG_TYPE, f"{what} {value[:40]!r} has no UTC offset")
        return parsed.astimezone(UTC)
    raise BadRecord(WRONG_TYPE, f"{what} is not a time")


def amount(value: Any, what: str, *, scale: int = 1) -> float:
    """A non-negative amount, from a JSON number or decimal text, divided by `scale`.

    Decimal text is read exactly (Anthropic's cents, `"123.45"`), so no binary rounding
    enters before the one division.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise BadRecord(WRONG_TYPE, f"{what} is not a number")
    try:
        exact = Decimal(value.strip() if isinstance(value, str) else repr(value))
    except InvalidOperation:
        raise BadRecord(WRONG_TYPE, f"{what} {str(value)[:40]!r} is not a number") from None
    if not exact.is_finite():
        raise BadRecord(NON_FINITE, f"{what} is not finite")
    result = float(exact / scale)
    if not 0.0 <= result < MAX_COST:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {result:g}, expected 0..{MAX_COST:g}")
    return result
