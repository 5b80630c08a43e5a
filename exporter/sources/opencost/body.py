"""One `/allocation` body, bytes or decoded JSON, into its allocations sorted by name and idle."""

from __future__ import annotations

from typing import Any

import msgspec

from exporter.sources.checks import Tally
from exporter.sources.opencost.records import Allocation, Totals
from exporter.sources.opencost.wire import SOURCE, decode_into

__all__ = ["parse_allocation_response", "sorted_set"]


def parse_allocation_response(
    body: Any, *, hours: float | None = None, tally: Tally | None = None
) -> tuple[tuple[Allocation, ...], dict[str, float]]:
    """Parse an `/allocation` body (bytes, or decoded JSON) into allocations and idle cost.

    Several sets (steps) are summed. An allocation or idle entry with a bad field is dropped
    and counted in `tally`; `hours` (the length of one set) bounds GPU-hours.
    """
    content = body if isinstance(body, bytes | bytearray) else msgspec.json.encode(body)
    totals = Totals()
    try:
        decode_into(content, hours, Tally() if tally is None else tally, totals)
    except msgspec.DecodeError:
        # Here, not at the top: the HTTP layer brings the client, which decoding never needs.
        from exporter.sources.http import not_json

        raise not_json(SOURCE, "/allocation", content) from None
    return sorted_set(totals)


def sorted_set(totals: Totals) -> tuple[tuple[Allocation, ...], dict[str, float]]:
    """Every allocation of `totals` built, sorted by name, and its idle per resource."""
    merged = totals.build()
    return tuple(merged[k] for k in sorted(merged)), totals.idle
