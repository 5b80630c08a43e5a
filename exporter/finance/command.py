"""`report`: the month asked, read from every source once, joined, in finance's format."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from exporter.calendar import Month
from exporter.clock import Clock
from exporter.config.schema import Config
from exporter.errors import UpstreamError
from exporter.finance.closed_month import closed_month
from exporter.finance.focus.export import FocusExport, focus_export
from exporter.finance.focus.metadata import focus_metadata
from exporter.finance.month_read import MonthRead, read_month
from exporter.finance.report.dimensions import dimension_report, focus_tagging
from exporter.finance.report.figures import KUEUE_NOW, PROMETHEUS, Report, build_report, model_rows
from exporter.finance.report.forecast import with_forecast_table
from exporter.finance.report.formats import format_report
from exporter.finance.report.gpu_month import (
    DCGM_HISTORY,
    GPU_PROMETHEUS,
    NO_DCGM,
    NO_HISTORY,
    UNREADABLE,
    with_gpu_month,
)
from exporter.finance.report.numbers import Numbers, statement_locale
from exporter.finance.report.operations import model_kinds, team_report, with_operations
from exporter.finance.report.reconciliation import reconciliation_table
from exporter.finance.report.what_if import (
    WhatIfTable,
    what_if_csv,
    what_if_json,
    what_if_table,
    what_if_text,
)
from exporter.finance.report.writing import CSV, people
from exporter.finance.statement.figures import build_statement, for_team, only_dimension
from exporter.finance.statement.html import statement_html
from exporter.finance.what_if.keys import parse_what_if
from exporter.finance.what_if.rerun import rerun
from exporter.ledger.advice.priced import team_advice
from exporter.ledger.attribution import Attributor
from exporter.ledger.forecast.build import with_forecast
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.ledger.what_if.settings import WhatIfError
from exporter.sources.dcgm_history import source as advice_source
from exporter.sources.dcgm_history.records import History
from exporter.sources.deadline import RetryPolicy
from exporter.sources.gpu_history_records import GpuMonth, TeamGpuMonth
from exporter.sources.readers import SourceReader, open_readers
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

__all__ = [
    "GpuHistory",
    "QuotaHistory",
    "ReportRequest",
    "print_month",
    "report_command",
    "run_report",
]

log = logging.getLogger("exporter")


# The month's quota history, read where the config says (it stands in for Kueue's state now).
QuotaHistory = Callable[[Month], object]
# The period's GPU operation from the exporter's own series: (start, end) -> GpuMonth.
GpuHistory = Callable[[tuple[datetime, datetime]], GpuMonth]


@dataclass(frozen=True)
class ReportRequest:
    """What the command line asked for: the format, the CSV table, the unallocated limit, and
    for FOCUS the folder its data and metadata go to (stdout gets the data alone without it)
    and the instant its metadata is created."""

    format: str
    table: str
    max_unallocated: float | None = None
    output: Path | None = None
    created: datetime | None = None
    team: str | None = None  # one team's own report or statement
    by: str | None = None  # rows by this dimension's values rather than by team
    month: str | None = None  # a closed month, YYYY-MM (None: the month to date)
    what_if: tuple[str, ...] = ()  # KEY=VALUE settings to join the month again under


def report_command(
    config: Config,
    path: str,
    clock: Clock,
    request: ReportRequest,
    history: QuotaHistory | None = None,
    gpu_history: GpuHistory | None = None,
) -> int:
    """Check the request, read every source once for the month asked, and print the report.

    With a month, the sources read that closed month (see `finance.closed_month`); a FOCUS
    export reads it by day. The exit status: 2 for a request the config cannot answer, 1 when
    the month cannot be read or is over the unallocated limit.
    """
    refused = _refused(config, request)
    if refused is not None:
        print(f"error: {refused}", file=sys.stderr)
        return 2
    now = clock()
    by_day = request.format == "focus"
    read_history = None
    if request.month is None:
        # The FOCUS export of the month to date reads it by day, as it does a closed month.
        reading = replace(Reading.open(now, config.zone), by_day=by_day)
    else:
        try:
            reading = closed_month(request.month, config.zone, now, by_day=by_day)
        except ValueError as exc:
            print(f"error: --month: {exc}", file=sys.stderr)
            return 2
        # Configured but unreadable, the quota history fails the report (exit 1) rather than
        # falling back to Kueue's state now: one closed month must print one bill, whenever
        # and wherever it runs, and a silent fallback would print another.
        if history is not None:
            try:
                read_history = history(reading.month)
            except (UpstreamError, ValueError) as exc:
                print(f"error: report.prometheus: {exc}", file=sys.stderr)
                return 1
    readers = open_readers(config, path, RetryPolicy(clock=clock))
    advice = advice_source.open_reader(config, path, RetryPolicy(clock=clock))
    try:
        request = replace(request, created=now)
        return run_report(
            config, readers, reading, request, read_history, gpu_history, advice=advice
        )
    finally:
        for reader in [*readers, *([advice] if advice is not None else [])]:
            reader.close()


def _refused(config: Config, request: ReportRequest) -> str | None:
    """Why the request cannot be answered as asked, or None."""
    if request.output is not None and request.format != "focus":
        return "--output is for --format focus"
    if request.output is not None and not request.output.is_dir():
        return f"--output: {request.output} is not a folder"
    if request.team is not None and request.format == "focus":
        return "--team is not for --format focus"
    if request.team is not None and request.by is not None:
        # A team's report is its own rows; a dimension's rows cut across the teams.
        return "--team and --by: choose one"
    if request.what_if:
        what_if = _what_if_refused(request)
        if what_if is not None:
            return what_if
    known = [d.name for d in config.dimensions]
    if request.by is not None and request.by not in known:
        return f"--by: no dimension {request.by!r} ({', '.join(known) or 'none'})"
    return None


def _what_if_refused(request: ReportRequest) -> str | None:
    if request.format == "focus":
        return "--what-if is not for --format focus: FOCUS is what was charged"
    if request.month is None:
        return "--what-if needs --month: it joins a closed month again"
    if request.by is not None:
        return "--what-if and --by: choose one"
    return None


def run_report(
    config: Config,
    readers: Sequence[SourceReader],
    reading: Reading,
    request: ReportRequest,
    history: object | None = None,
    gpu_history: GpuHistory | None = None,
    *,
    advice: SourceReader | None = None,
) -> int:
    """Print the month's report; the exit status (1: no cost data, a source's reads that
    disagree on which parts hold data, or over the unallocated limit; 2: a team the month
    does not have, or a what-if that cannot be applied). `history`, when read, stands in for
    Kueue's quotas now."""
    replaced: Mapping[str, object] = {"kueue": history} if history is not None else {}
    read = read_month(readers, reading, replaced)
    if read.unconfirmed:
        # A read empty where another held data: printing either could bill a month short.
        for reason in read.unconfirmed:
            print(f"error: {reason}", file=sys.stderr)
        return 1
    return print_month(
        config, read, reading, request, history is not None, gpu_history, advice=advice
    )


def print_month(
    config: Config,
    read: MonthRead,
    reading: Reading,
    request: ReportRequest,
    quota_history: bool = False,
    gpu_history: GpuHistory | None = None,
    *,
    advice: SourceReader | None = None,
) -> int:
    """Join the month read and print it as asked (with its what-if, if asked); the exit status
    as `run_report`'s. `quota_history`: the quotas are the month's history, not Kueue's now."""
    focus = request.format == "focus"
    latest = Snapshots.of(read.snapshots)
    chargeback = join(config, Attributor(config), latest, reading, detail=focus)
    if not reading.closed:
        # The report reads the month once: no whole days, no last month (docs/forecast.md).
        chargeback = with_forecast(chargeback)
    if chargeback.folded_teams:
        log.warning("teams folded into __other__: %s", ", ".join(chargeback.folded_teams))
    chargeback = _with_advice(config, chargeback, advice)
    if chargeback.month is None or chargeback.month_idle is None:
        print(
            "error: no cost data: the OpenCost source is not configured or failed", file=sys.stderr
        )
        return 1
    report = _month_report(config, chargeback, quota_history)
    what_if = None
    if request.what_if:
        try:
            what_if = _what_if(config, latest, chargeback, report, request, quota_history)
        except WhatIfError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    report = with_operations(report, chargeback)
    report = replace(report, reconciliation=reconciliation_table(chargeback))
    report = with_gpu_month(report, *_gpu_month(config, chargeback, gpu_history))
    report = replace(report, advice=chargeback.advice)
    # With --by, the text formats and the unallocated gate are the dimension's.
    gated = _by(chargeback, report, request.by)
    if focus:
        # Every dimension is in every row's Tags, so --by changes nothing here.
        tags = focus_tagging(chargeback, report)
        _write_focus(focus_export(config, read.snapshots, report, reading, tags), request)
    elif request.format == "html":
        dated = with_forecast_table(report, chargeback)
        statement = only_dimension(build_statement(dated, chargeback, config), request.by)
        if request.team is not None:
            try:
                statement = for_team(statement, request.team)
            except ValueError as exc:
                print(f"error: --team: {exc}", file=sys.stderr)
                return 2
        if what_if is not None:
            statement = replace(statement, what_if=what_if)
        numbers = Numbers(statement_locale(config), config.currency)
        sys.stdout.write(statement_html(statement, numbers))
    else:
        shown = gated
        if request.team is not None:
            try:
                shown = team_report(report, chargeback, config, request.team)
            except ValueError as exc:
                print(f"error: --team: {exc}", file=sys.stderr)
                return 2
        numbers = Numbers(statement_locale(config), config.currency)
        shown = with_forecast_table(shown, chargeback)
        sys.stdout.write(_formatted(shown, request, numbers, what_if))
    if read.failed:
        print("warning: some sources failed; the report lacks their figures", file=sys.stderr)
    share, limit = gated.unallocated_share, request.max_unallocated
    if limit is not None and share > limit:
        print(f"error: unallocated share {share:.2f} % is above {limit:.2f} %", file=sys.stderr)
        return 1
    return 0


def _month_report(config: Config, chargeback: Chargeback, quota_history: bool) -> Report:
    """The month's figures as the report prints them, before its operating columns."""
    reading = chargeback.reading
    assert chargeback.month is not None and chargeback.month_idle is not None
    return build_report(
        chargeback.month,
        config.currency,
        reading.month.label,
        chargeback.budgets,
        model_rows(chargeback.llm_usage, chargeback.llm_pricing, model_kinds(config)),
        idle=chargeback.month_idle,
        closed=reading.closed,
        quota_basis=_quota_basis(reading.closed, quota_history, chargeback),
        units=chargeback.units,
    )


def _what_if(
    config: Config,
    latest: Snapshots,
    before: Chargeback,
    report: Report,
    request: ReportRequest,
    quota_history: bool,
) -> WhatIfTable:
    """The month joined again under the request's settings, beside the month as charged."""
    what_if = parse_what_if(request.what_if, config, latest)
    again = rerun(what_if, config, latest, before)
    after = _month_report(again.config, again.after, quota_history)
    policy = (str(config.idle_policy), str(again.config.idle_policy))
    return what_if_table(report, after, what_if.given, policy, again.notes, request.team)


def _formatted(
    report: Report, request: ReportRequest, numbers: Numbers, what_if: WhatIfTable | None
) -> str:
    """The report in its text format, the what-if after it (CSV: the what-if's table alone)."""
    if what_if is None:
        return format_report(report, request.format, request.table, numbers)
    if request.format == "csv":
        return what_if_csv(what_if, report.currency, CSV)
    text = format_report(report, request.format, request.table, numbers)
    if request.format == "json":
        payload = json.loads(text)
        payload["what_if"] = what_if_json(what_if)
        return json.dumps(payload, indent=2) + "\n"
    return text + what_if_text(what_if, people(numbers))


def _by(chargeback: Chargeback, report: Report, by: str | None) -> Report:
    # The CLI checked the name against the config; the join made a split for each.
    return report if by is None else dimension_report(chargeback, by, report)


def _write_focus(export: FocusExport, request: ReportRequest) -> None:
    if request.output is None:
        sys.stdout.write(export.csv)
        return
    data = request.output / f"{export.name}.csv"
    content = export.csv.encode()
    data.write_bytes(content)
    assert request.created is not None
    metadata = focus_metadata(data.name, export.rows, len(content), request.created)
    meta = request.output / f"{export.name}-metadata.json"
    meta.write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {data} and {meta}", file=sys.stderr)


def _gpu_month(
    config: Config, chargeback: Chargeback, history: GpuHistory | None
) -> tuple[GpuMonth | None, str]:
    """The period's GPU operation and where it came from (or why it is not known)."""
    if config.sources.dcgm is None:
        return None, NO_DCGM
    reading = chargeback.reading
    basis = NO_HISTORY
    if history is not None:
        try:
            return history((reading.month.start, reading.until)), GPU_PROMETHEUS
        except (UpstreamError, ValueError) as exc:
            log.warning("report.prometheus: GPU history: %s", exc)
            basis = UNREADABLE
    gpus = chargeback.gpus
    if gpus is not None and gpus.idle_hours is not None:
        teams = tuple(TeamGpuMonth(t.team, t.hours, None, None, None) for t in gpus.idle_hours)
        return GpuMonth(teams, {}), DCGM_HISTORY
    return None, basis


def _with_advice(config: Config, chargeback: Chargeback, reader: SourceReader | None) -> Chargeback:
    """The advice over the window ending where the month's reading ends; a history that cannot
    be read leaves the report without it (a warning), never the bill."""
    if reader is None:
        return chargeback
    try:
        window = reader.read(chargeback.reading)
    except UpstreamError as exc:
        log.warning("advice: history: %s", exc)
        return chargeback
    if not isinstance(window, History):
        return chargeback
    found = team_advice(config, Attributor(config), window, chargeback.units.prices)
    return replace(chargeback, advice=found)


def _quota_basis(closed: bool, history: bool, chargeback: Chargeback) -> str | None:
    # Kueue keeps no history: without report.prometheus a closed month's quotas are today's.
    if not closed:
        return None
    if history:
        return PROMETHEUS
    return KUEUE_NOW if chargeback.quota is not None else None
