"""One reading of every configured source for the report: each read once, failures said.

The server doubts a part of a read (a list, a date's activity, the tag activity) that comes
back empty after an earlier read held data, and waits for a second read to say the same
(sources.checks.Emptiness). The report reads once and has no earlier read to doubt against,
so a source whose read answered a part with nothing is read a second time, whole, on a new
client: the two must agree on which parts hold data. When they do not, the month cannot be
printed from either, and the report refuses, naming the source and the parts to read again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.errors import UpstreamError, UpstreamIncomplete
from exporter.sources.checks import emptiness_of
from exporter.sources.readers import SourceReader
from exporter.sources.reading import Reading

__all__ = ["MonthRead", "Unconfirmed", "read_month"]

log = logging.getLogger("exporter")


class Unconfirmed(UpstreamIncomplete):
    """Two reads of one source disagree on which parts hold data: neither can be printed."""


@dataclass(frozen=True)
class MonthRead:
    """The snapshots read, by source name, the sources that failed, and why any source's
    emptiness could not be confirmed (the report refuses then)."""

    snapshots: Mapping[str, object]
    failed: tuple[str, ...]
    unconfirmed: tuple[str, ...] = ()


def read_month(
    readers: Iterable[SourceReader],
    reading: Reading,
    replaced: Mapping[str, object] | None = None,
) -> MonthRead:
    """Read `reading` from every source once (twice when a part came back empty);
    `replaced` stands in for a source's read (the month's quota history for Kueue's state
    now). A failed source is logged and left out."""
    snapshots: dict[str, object] = {}
    failed: list[str] = []
    unconfirmed: list[str] = []
    for reader in readers:
        if replaced and reader.name in replaced:
            snapshots[reader.name] = replaced[reader.name]
            continue
        try:
            snapshot = confirmed_read(reader, reading)
        except Unconfirmed as exc:
            unconfirmed.append(str(exc))
            continue
        except UpstreamError as exc:
            log.warning("source=%s read failed: %s", reader.name, exc)
            failed.append(reader.name)
            continue
        except Exception as exc:  # noqa: BLE001 - one source's bug must not lose the others
            log.warning(
                "source=%s read failed: unexpected %s: %s", reader.name, type(exc).__name__, exc
            )
            failed.append(reader.name)
            continue
        snapshots[reader.name] = snapshot
    return MonthRead(snapshots, tuple(failed), tuple(unconfirmed))


def confirmed_read(reader: SourceReader, reading: Reading) -> object:
    """One read of `reading`; when it answered a part with nothing, a second whole read that
    must agree on every part's emptiness (Unconfirmed when it does not)."""
    snapshot = reader.read(reading)
    first = emptiness_of(reader.client)
    if not first.empty():
        return snapshot
    again = reader.fresh()
    if again is None:
        # The same client: its own check fails a part that held data and is empty now.
        try:
            return reader.read(reading)
        except UpstreamIncomplete as exc:
            raise _unconfirmed(reader.name, str(exc)) from None
    try:
        second = again.read(reading)
        held, now = first.held(), emptiness_of(again.client).held()
    finally:
        again.close()
    flapped = sorted(p for p in held.keys() & now.keys() if held[p] != now[p])
    if flapped:
        raise _unconfirmed(
            reader.name, f"{', '.join(flapped)} held data in one read and none in the next"
        )
    return second


def _unconfirmed(source: str, what: str) -> Unconfirmed:
    return Unconfirmed(
        f"{source}: {what.removeprefix(f'{source}: ')}; the report cannot tell which read is "
        f"whole: retry it once {source} answers the same twice"
    )
