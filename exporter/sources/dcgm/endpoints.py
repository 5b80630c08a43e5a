"""DCGM endpoints judged one by one, against each one's last good read in this process.

- **A read is complete or it is not.** A read that holds fewer GPUs, or fewer fields of a GPU,
  than the endpoint's last good read (remembered for `max_staleness`) fails as incomplete (a
  body cut at a family boundary still parses and is consistent in itself); the next read that
  says the same is believed, as a GPU really taken out or a field really switched off would.
- **A failed endpoint is its node's GPUs unknown, not gone.** Its last good read, no older than
  `max_staleness`, stands in: the same GPUs held by the same pods, each utilisation and power
  sample counted as dropped (`missing_field`), so the ledger serves them as unknown (the last
  good utilisation of each stands in as for any corrupt sample) and nothing is computed from
  the other nodes alone. An endpoint without such a read carries GPUs the ledger cannot place:
  the caller decides (listed urls fail the refresh; discovery leaves them out, counted).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import httpx

from exporter.errors import UpstreamIncomplete
from exporter.sources.checks import MISSING_FIELD
from exporter.sources.dcgm.parse import Shape
from exporter.sources.dcgm.records import SOURCE, GpuRecord

__all__ = ["EndpointMemory", "memory_of"]


@dataclass
class _Last:
    """An endpoint's last good read, and a smaller shape seen once since, awaiting a second."""

    at: datetime
    records: tuple[GpuRecord, ...]
    shape: frozenset[tuple[str, str, str, str]]
    pending: frozenset[tuple[str, str, str, str]] | None = None


class EndpointMemory:
    """The last good read of every endpoint one client has scraped, by URL."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_url: dict[str, _Last] = {}

    def accept(
        self, url: str, records: list[GpuRecord], shape: Shape, at: datetime
    ) -> list[GpuRecord]:
        """The read's records, kept as the endpoint's last good read; raises if it shrank.

        A read smaller than the last good one raises UpstreamIncomplete, unless the read
        before it was refused for the same shape: twice in a row, the endpoint is believed.
        """
        now = frozenset(shape)
        with self._lock:
            last = self._by_url.get(url)
            if last is not None and not now >= last.shape and last.pending != now:
                last.pending = now
                raise UpstreamIncomplete(
                    f"{SOURCE}: {url}: the read lacks {_lost(last.shape - now)} that the "
                    "endpoint's last good read had; a second read that says the same is believed"
                )
            self._by_url[url] = _Last(at, tuple(records), now)
        return records

    def forget_before(self, when: datetime) -> None:
        """Drop the reads of endpoints not read well since `when` (discovered pods come and go:
        a gone pod's address must not be remembered for the process's life)."""
        with self._lock:
            for url in [u for u, last in self._by_url.items() if last.at < when]:
                del self._by_url[url]

    def stand_in(self, url: str, at: datetime, max_age: timedelta) -> list[GpuRecord] | None:
        """The endpoint's last good GPUs with every sample unknown; None without a fresh one."""
        with self._lock:
            last = self._by_url.get(url)
        if last is None or not timedelta() <= at - last.at <= max_age:
            return None
        return [_unknown(record) for record in last.records]


def _unknown(record: GpuRecord) -> GpuRecord:
    # A GPU that reported power before is one whose draw is now unknown, not one without any.
    had_power = record.power_watts is not None or bool(record.power_corrupt)
    return replace(
        record,
        utilisation=None,
        corrupt=MISSING_FIELD,
        power_watts=None,
        power_corrupt=MISSING_FIELD if had_power else "",
    )


def _lost(missing: frozenset[tuple[str, str, str, str]]) -> str:
    first = min(missing)
    node, gpu, instance, name = (part[:60] for part in first)
    where = f"GPU {gpu!r}{f' instance {instance!r}' if instance else ''} on {node!r}"
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    return f"{name} of {where}{more}"


_MEMORIES: weakref.WeakKeyDictionary[httpx.Client, EndpointMemory] = weakref.WeakKeyDictionary()
_MEMORIES_LOCK = threading.Lock()


def memory_of(client: httpx.Client) -> EndpointMemory:
    """The client's endpoint memory: the refresher keeps one client per source for its life."""
    with _MEMORIES_LOCK:
        return _MEMORIES.setdefault(client, EndpointMemory())
