"""A cloud provider's FOCUS cost export: CSV (optionally gzip) or Parquet, in a file or a folder.

The export job of AWS Data Exports, Azure Cost Management, Google Cloud or OCI writes the
month's rows into a folder (docs/sources/focus-exports.md). Each file is streamed, never held
whole (a month of a large cluster is gigabytes): CSV a row at a time through the csv module,
Parquet a batch at a time (focus_parquet, with the `parquet` extra). A file modified within
`settle` may still be being written, so the read fails until it settles rather than publish
part of it. A file without a mandatory column is refused with the columns it lacks. Rows
outside the month are skipped; a selected row with a bad field is dropped and counted, and
fails the read (the bill would be short without it).
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import IO

import httpx

from exporter.config.bills import FocusExportConfig
from exporter.config.types import format_duration
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamUnavailable
from exporter.files import check_regular_file
from exporter.sources.bills.focus_parquet import MAGIC, parquet_rows
from exporter.sources.bills.focus_rows import Columns, Row, billed, parse_instant, selected
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot
from exporter.sources.bills.settings import DAY, BillShared, BillWindow, confirm_held, window_of
from exporter.sources.checks import MISSING_FIELD, BadRecord, Tally, refuse_dropped
from exporter.sources.deadline import current
from exporter.sources.reading import Reading

__all__ = ["build_client", "export_files", "fetch"]

_GZIP = b"\x1f\x8b"
_SUFFIXES = (".csv", ".csv.gz", ".parquet")
# Rows between two looks at the refresh's deadline: a look costs a clock read.
_EVERY = 4096

_Key = tuple[BillKind, date, str, str, str | None, str | None, str | None, str]


def build_client(cfg: FocusExportConfig) -> httpx.Client:
    """No upstream speaks HTTP here; the source table still gives every source a client, and
    this one refuses any request (it also keys what the source keeps between reads)."""
    del cfg
    return httpx.Client(transport=httpx.MockTransport(_no_http))


def _no_http(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("a FOCUS export is read from files", request=request)


def fetch(
    client: httpx.Client, cfg: FocusExportConfig, shared: BillShared, reading: Reading
) -> BillSnapshot:
    """The export's charges of the reading's month, summed per day, kind and resource."""
    window, tally, sums = window_of(reading), Tally(), _Sums()
    tag = tuple(cfg.cluster_tag.split("=", 1)) if cfg.cluster_tag else None
    for path in export_files(cfg, shared):
        _read_file(path, shared, window, (tag[0], tag[1]) if tag else None, sums, tally)
    refuse_dropped(shared.source, tally, "cost rows")
    currencies = {key[3] for key in sums.amounts}
    for code in sorted(currencies):
        shared.currency_of(code)
    confirm_held(client, shared, window, bool(sums.amounts))
    return BillSnapshot(
        source=shared.name,
        kind=BillKind.CLUSTER,
        lines=tuple(sums.lines(shared)),
        days_billed=sums.whole_days(window),
        dropped=sum(tally.values()),
    )


def export_files(cfg: FocusExportConfig, shared: BillShared) -> list[Path]:
    """The export's CSV files, in name order; a file still settling fails the read."""
    root = Path(cfg.path)
    try:
        found = (
            sorted(p for p in root.rglob("*") if p.name.endswith(_SUFFIXES))
            if root.is_dir()
            else [root]
        )
        ages = [(p, shared.clock() - p.stat().st_mtime) for p in found]
    except OSError as exc:
        raise UpstreamUnavailable(f"{shared.source}: {cfg.path}: {exc.strerror or exc}") from None
    settle = cfg.settle.total_seconds()
    for path, age in ages:
        if age < settle:
            raise UpstreamIncomplete(
                f"{shared.source}: {path.name} was modified {max(age, 0.0):.0f}s ago, within "
                f"settle ({format_duration(cfg.settle)}): still being written, not read yet"
            )
    return found


def _read_file(
    path: Path,
    shared: BillShared,
    window: BillWindow,
    tag: tuple[str, str] | None,
    sums: _Sums,
    tally: Tally,
) -> None:
    where = f"{shared.source}: {path.name}"
    try:
        check_regular_file(str(path))
        with _rows(path, where) as rows:
            header = next(rows, None)
            if header is None:
                return  # an empty file bills nothing
            try:
                columns = Columns.of(header, tagged=tag is not None)
            except ValueError as exc:
                raise UpstreamPayloadError(f"{where}: {exc}") from None
            _read_rows(rows, columns, window, tag, sums, tally, where)
    except FileNotFoundError:
        raise UpstreamIncomplete(f"{where}: gone while read (rewritten by the export?)") from None
    except OSError as exc:  # gzip.BadGzipFile included
        raise UpstreamPayloadError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    except (csv.Error, UnicodeDecodeError, EOFError) as exc:
        raise UpstreamPayloadError(f"{where}: not a readable CSV file ({exc})") from None


@contextmanager
def _rows(path: Path, where: str) -> Iterator[Iterator[list[str]]]:
    """The file's rows, the header first: Parquet by its magic bytes, else CSV."""
    with path.open("rb") as probe:
        parquet = probe.read(len(MAGIC)) == MAGIC
    if parquet:
        yield parquet_rows(path, where)
        return
    with _text(path) as text:
        yield csv.reader(text)


@contextmanager
def _text(path: Path) -> Iterator[IO[str]]:
    """The file as text, inflated as it is read when it is gzip (by its bytes, not its name)."""
    with path.open("rb") as raw:
        zipped = raw.read(2) == _GZIP
        raw.seek(0)
        # utf-8-sig: Azure's exports start with a byte order mark.
        if zipped:
            with io.TextIOWrapper(
                gzip.GzipFile(fileobj=raw, mode="rb"), "utf-8-sig", newline=""
            ) as text:
                yield text
        else:
            with io.TextIOWrapper(raw, "utf-8-sig", newline="") as text:
                yield text


def _read_rows(
    rows: Iterator[list[str]],
    columns: Columns,
    window: BillWindow,
    tag: tuple[str, str] | None,
    sums: _Sums,
    tally: Tally,
    where: str,
) -> None:
    deadline = current()
    for n, row in enumerate(rows, start=2):
        if n % _EVERY == 0 and deadline.remaining() < 0:
            raise UpstreamUnavailable(
                f"{where}: passed the refresh deadline at row {n}", timeout=True
            )
        try:
            kind = selected(columns, row, tag)
            start = parse_instant(columns.get(row, "ChargePeriodStart"), "ChargePeriodStart")
            end = parse_instant(columns.get(row, "ChargePeriodEnd"), "ChargePeriodEnd")
        except (BadRecord, IndexError) as exc:
            # A row of another resource with a bad date is not this bill's fault; one that
            # cannot even be told apart might be the cluster's, and counts.
            if _may_be_ours(columns, row, tag):
                _drop(tally, n, exc)
            continue
        if not window.holds(start.date()) or start >= window.until:
            continue
        sums.seen(start.date(), end)
        if kind is None:
            continue
        try:
            sums.add(billed(columns, row, kind, start.date(), end))
        except (BadRecord, IndexError) as exc:
            _drop(tally, n, exc)


def _may_be_ours(columns: Columns, row: list[str], tag: tuple[str, str] | None) -> bool:
    try:
        return selected(columns, row, tag) is not None
    except (BadRecord, IndexError):
        return True


def _drop(tally: Tally, n: int, exc: BadRecord | IndexError) -> None:
    reason = exc if isinstance(exc, BadRecord) else BadRecord(MISSING_FIELD, "a short row")
    tally.drop(BadRecord(reason.reason, f"row {n}: {reason}"))


def _interned(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


def _order(key: _Key) -> tuple[date, str, str, str, str, str, str, str]:
    kind, day, provider, currency, resource, scope, invoice, description = key
    return (
        day,
        kind.value,
        provider,
        resource or "",
        scope or "",
        invoice or "",
        description,
        currency,
    )


@dataclass
class _Sums:
    """The selected rows summed per line, and how far the export has reached."""

    amounts: dict[_Key, Decimal] = field(default_factory=dict)
    latest_day: date | None = None
    latest_end: datetime | None = None
    billing_end: datetime | None = None

    def seen(self, day: date, end: datetime) -> None:
        if self.latest_day is None or day > self.latest_day:
            self.latest_day = day
        if self.latest_end is None or end > self.latest_end:
            self.latest_end = end

    def add(self, row: Row) -> None:
        # Interned: a resource's id, provider and category repeat every day of the month, and
        # the kept lines are what the read holds (the rows stream past).
        key = (
            row.kind,
            row.day,
            sys.intern(row.provider),
            sys.intern(row.currency.upper()),
            _interned(row.resource_id),
            _interned(row.scope),
            _interned(row.invoice),
            sys.intern(row.description),
        )
        self.amounts[key] = self.amounts.get(key, Decimal(0)) + row.amount
        if row.billing_end is not None:
            self.billing_end = row.billing_end

    def lines(self, shared: BillShared) -> Iterator[BilledLine]:
        """The summed lines in a stable order, each sum let go once its line is made."""
        for key in sorted(self.amounts, key=_order):
            kind, day, provider, currency, resource, scope, invoice, description = key
            yield BilledLine(
                source=shared.name,
                provider=provider,
                kind=kind,
                day=day,
                amount=float(self.amounts.pop(key)),
                currency=currency,
                scope=scope if kind is BillKind.LLM else None,
                resource_id=resource,
                invoice=invoice,
                description=description,
            )

    def whole_days(self, window: BillWindow) -> frozenset[date]:
        """The days before the latest the export reached, and that one too once the export
        reaches its billing period's end; none the reading has not passed."""
        if self.latest_day is None:
            return frozenset()
        last = self.latest_day - DAY
        ended = self.billing_end is not None and self.latest_end is not None
        if ended and self.latest_end >= self.billing_end:  # type: ignore[operator]
            last = self.latest_day
        days = (window.first + timedelta(days=n) for n in range((last - window.first).days + 1))
        return frozenset(day for day in days if window.closed(day))
