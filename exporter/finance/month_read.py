"""One reading of every configured source for the report: each read once, failures said."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.errors import UpstreamError
from exporter.sources.readers import SourceReader
from exporter.sources.reading import Reading

__all__ = ["MonthRead", "read_month"]

log = logging.getLogger("exporter")


@dataclass(frozen=True)
class MonthRead:
    """The snapshots read, by source name, and the sources that failed."""

    snapshots: Mapping[str, object]
    failed: tuple[str, ...]


def read_month(
    readers: Iterable[SourceReader],
    reading: Reading,
    replaced: Mapping[str, object] | None = None,
) -> MonthRead:
    """Read `reading` from every source once; `replaced` stands in for a source's read (the
    month's quota history for Kueue's state now). A failed source is logged and left out."""
    snapshots: dict[str, object] = {}
    failed: list[str] = []
    for reader in readers:
        if replaced and reader.name in replaced:
            snapshots[reader.name] = replaced[reader.name]
            continue
        try:
            snapshot = reader.read(reading)
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
    return MonthRead(snapshots, tuple(failed))
