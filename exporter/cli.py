"""Command line: serve metrics, print them once, check a config, or print the finance report."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from types import FrameType

from exporter import __version__, logs
from exporter.calendar import Month
from exporter.clock import Clock, system_clock
from exporter.config.offline_check import check_config_offline, check_web_config_offline
from exporter.config.schema import Config, load_config, setting_error
from exporter.config.web import WebServing, load_web_config
from exporter.errors import ConfigError
from exporter.exposition.catalogue.gpus import GPUS, TEAM_GPU_UTILIZATION_RATIO
from exporter.exposition.catalogue.quota import QUOTA_LENDING_LIMIT, QUOTA_NOMINAL
from exporter.exposition.catalogue.unit_economics import (
    LLM_BREAK_EVEN_RATIO,
    LLM_BREAK_EVEN_UTILIZATION_RATIO,
    TEAM_GPU_CO2E_GRAMS_PER_HOUR,
    TEAM_GPU_ENERGY_KWH_PER_HOUR,
)
from exporter.finance.command import GpuHistory, QuotaHistory, ReportRequest, report_command
from exporter.finance.report.figures import TABLES
from exporter.finance.statement.served import STATEMENT, STATEMENT_HEADERS, statement_artefact
from exporter.serve.lifecycle import Lifecycle
from exporter.serve.pages import Page
from exporter.serve.refresher import Refresher
from exporter.serve.routes import HEALTH_PATH, RUNBOOK_PATH
from exporter.serve.server import MetricsServer, parse_listen_address
from exporter.serve.wiring import make_refresher
from exporter.sources.gpu_history import gpu_history
from exporter.sources.gpu_history_records import GpuMonth, GpuSeries
from exporter.sources.kueue.history import QuotaSeries, quota_history
from exporter.sources.readers import open_readers
from exporter.sources.registry import SOURCES
from exporter.sources.report_prometheus import open_client

__all__ = ["main"]

DEFAULT_LISTEN = ":10290"
# What the server publishes beside the metrics: the month to date as finance's statement.
PAGES = (
    Page(
        STATEMENT,
        "/statement",
        "the month to date as a statement",
        statement_artefact,
        headers=STATEMENT_HEADERS,
    ),
)
log = logging.getLogger("exporter")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-chargeback-exporter",
        description="Per-team GPU and LLM chargeback metrics from OpenCost, DCGM, Kueue, LiteLLM.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("--config.file", dest="config_file", help="YAML config file")
    parser.add_argument(
        "--log.level",
        dest="log_level",
        default="info",
        choices=["debug", "info", "warning", "error"],
    )
    parser.add_argument(
        "--web.listen-address",
        dest="listen",
        default=DEFAULT_LISTEN,
        help=f"address to serve on (default {DEFAULT_LISTEN})",
    )
    parser.add_argument(
        "--web.telemetry-path",
        dest="telemetry_path",
        default="/metrics",
        help="path of the metrics (default /metrics)",
    )
    parser.add_argument(
        "--web.config.file",
        dest="web_config_file",
        metavar="FILE",
        help="exporter-toolkit web config: TLS and basic auth (default: plain HTTP, no auth)",
    )
    parser.add_argument(
        "--web.healthz-without-auth",
        dest="healthz_without_auth",
        action="store_true",
        help="answer /healthz (and only it) without basic auth, for kubelet probes; "
        "it carries no figure",
    )
    parser.add_argument(
        "--once", action="store_true", help="fetch every source once, print the exposition and exit"
    )
    parser.add_argument(
        "--check-config",
        action="store_true",
        help="validate the config, read its secrets and build its clients, then exit",
    )
    parser.add_argument(
        "--check-config.offline",
        dest="check_config_offline",
        action="store_true",
        help="validate the config's syntax and references without reading secrets, kubeconfig "
        "or service-account files and without connecting, then exit (for CI)",
    )
    sub = parser.add_subparsers(dest="command")
    report = sub.add_parser("report", help="print the month-to-date chargeback table")
    # SUPPRESS: without it the subcommand's defaults would overwrite the same flags given first.
    report.add_argument(
        "--config.file", dest="config_file", default=argparse.SUPPRESS, help="YAML config file"
    )
    report.add_argument(
        "--format",
        choices=["table", "csv", "json", "html", "focus"],
        default="table",
        help="html: one self-contained page; focus: FOCUS 1.2 CSV, daily rows",
    )
    report.add_argument(
        "--table",
        choices=TABLES,
        default="teams",
        metavar="NAME",
        help="the one table --format csv writes: teams (default), models, backlog or a "
        "unit-economics table (its name in the JSON report)",
    )
    report.add_argument(
        "--month",
        metavar="YYYY-MM",
        help="a closed past month in the configured time zone (default: the month to date)",
    )
    report.add_argument(
        "--output",
        metavar="DIR",
        help="--format focus: write the CSV and its FOCUS metadata into DIR (default: the CSV "
        "on stdout)",
    )
    report.add_argument(
        "--team",
        metavar="NAME",
        help="one team's own report (every format but focus)",
    )
    report.add_argument(
        "--by",
        metavar="NAME",
        help="rows by the values of the configured dimension NAME rather than by team",
    )
    report.add_argument(
        "--what-if",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --month: each team's total again under another idle_policy, "
        "gpu_price.<model>, gpu_flavor_price.<flavor>, quota.<clusterqueue> or "
        "tokens_per_second.<model> (repeatable; not for focus)",
    )
    report.add_argument(
        "--max-unallocated",
        type=float,
        metavar="PCT",
        help="exit 1 when the unallocated share is above PCT percent",
    )
    return parser


def main(argv: Sequence[str] | None = None, clock: Clock = system_clock) -> int:
    """Entry point of the console script; returns the exit status.

    `clock` is the one source of "now" for every source, join and report (tests fix it).
    """
    args = _parser().parse_args(argv)
    logs.configure(args.log_level.upper())
    if not args.config_file:
        print("error: give --config.file FILE", file=sys.stderr)
        return 2
    path = args.config_file
    issue = _telemetry_path_issue(args.telemetry_path)
    if issue is not None:
        print(f"error: --web.telemetry-path: {issue}", file=sys.stderr)
        return 2
    try:
        if args.check_config_offline:
            return _check_offline(path, args.web_config_file)
        config = load_config(path)
        if args.command == "report":
            return _report(config, path, clock, args)
        if args.check_config:
            # Building the sources reads their secrets and kubeconfig: check those too.
            for reader in open_readers(config, path):
                reader.close()
            _check_report_client(config, path)
            print(f"{path}: ok", file=sys.stderr)
            if args.web_config_file:
                load_web_config(args.web_config_file)
                print(f"{args.web_config_file}: ok", file=sys.stderr)
            return 0
        if args.once:
            return _once(make_refresher(config, path, clock))
        # Before any source starts: a bad web config is a config error, exit 2.
        web = load_web_config(args.web_config_file) if args.web_config_file else None
        service = Lifecycle(config, path, clock, PAGES)
        return _serve(service, args, web)
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 2


def _check_offline(path: str, web_config_file: str | None) -> int:
    check_config_offline(path, {name: kind.section for name, kind in SOURCES.items()})
    print(f"{path}: ok (offline: secrets and connections not checked)", file=sys.stderr)
    if web_config_file:
        check_web_config_offline(web_config_file)
        print(f"{web_config_file}: ok (offline: certificate files not read)", file=sys.stderr)
    return 0


def _once(refresher: Refresher) -> int:
    ok = refresher.refresh_all()
    sys.stdout.buffer.write(refresher.exposition.text)
    refresher.stop()
    return 0 if ok else 1


def _telemetry_path_issue(path: str) -> str | None:
    """Why the metrics cannot be served at `path`, or None."""
    if not path.startswith("/"):
        return f"must start with /, got {path!r}"
    taken = {"/": "the landing page", HEALTH_PATH: "health", RUNBOOK_PATH: "the runbook"}
    taken |= {p.path: p.name for p in PAGES}
    if path in taken:
        return f"{path} already serves {taken[path]}"
    if "?" in path or "#" in path or any(c.isspace() for c in path):
        return f"a path has no query, fragment or space, got {path!r}"
    return None


def _serve(service: Lifecycle, args: argparse.Namespace, web: WebServing | None) -> int:
    listen, telemetry_path = args.listen, args.telemetry_path
    try:
        address = parse_listen_address(listen)
    except ValueError as exc:
        print(f"error: --web.listen-address: {exc}", file=sys.stderr)
        return 2
    try:
        server = MetricsServer(
            address,
            telemetry_path,
            service.exposition,
            tls=web.tls if web else None,
            auth=web.auth if web else None,
            healthz_without_auth=args.healthz_without_auth,
            pages=PAGES,
            rendered=service.page,
            health=service.health,
        )
    except OSError as exc:
        print(f"error: cannot listen on {listen}: {exc.strerror}", file=sys.stderr)
        return 1
    service.start()
    _on_signals(server, service)
    scheme = "https" if web and web.tls else "http"
    log.info("listening on %s://%s:%d%s", scheme, address[0], server.port, telemetry_path)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    service.stop()
    return 0


def _on_signals(server: MetricsServer, service: Lifecycle) -> None:
    """SIGTERM stops serving; SIGHUP reloads the config file, as Prometheus does.

    Handlers run in the main thread, which is the one serving: stopping is handed to a thread
    (stop() waits for serve_forever() to return), and a reload is only asked for: the
    lifecycle's own thread reloads once per burst of signals.
    """

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("signal %d: shutting down", signum)
        threading.Thread(target=server.stop, daemon=True).start()

    def reload(signum: int, frame: FrameType | None) -> None:
        del frame
        # A burst of signals makes one reload (Lifecycle.request_reload).
        if service.request_reload():
            log.info("signal %d: reloading the config", signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, reload)


def _check_report_client(config: Config, path: str) -> None:
    """Build (and close) the report's Prometheus client: its unreadable token is a ConfigError."""
    cfg = config.report.prometheus
    if cfg is None:
        return
    try:
        open_client(cfg, path).close()
    except ValueError as exc:
        raise setting_error(path, ("report", "prometheus"), cfg, str(exc)) from None


def _report(config: Config, path: str, clock: Clock, args: argparse.Namespace) -> int:
    """The report asked on the command line (finance.command), with the month's quota history
    from the Prometheus the config names."""
    output = Path(args.output) if args.output is not None else None
    request = ReportRequest(
        args.format,
        args.table,
        args.max_unallocated,
        output,
        team=args.team,
        by=args.by,
        month=args.month,
        what_if=tuple(args.what_if),
    )
    history = _quota_history(config, path)
    return report_command(config, path, clock, request, history, _gpu_history(config, path))


# The names the exporter publishes GPU operation under, which a closed month's report reads back.
PUBLISHED_GPU_SERIES = GpuSeries(
    GPUS.name,
    TEAM_GPU_UTILIZATION_RATIO.name,
    TEAM_GPU_ENERGY_KWH_PER_HOUR.name,
    TEAM_GPU_CO2E_GRAMS_PER_HOUR.name,
    LLM_BREAK_EVEN_UTILIZATION_RATIO.name,
    LLM_BREAK_EVEN_RATIO.name,
)


def _gpu_history(config: Config, path: str) -> GpuHistory | None:
    """The period's GPU operation as the exporter published it, where report.prometheus says."""
    cfg = config.report.prometheus
    if cfg is None:
        return None

    def read(span: tuple[datetime, datetime]) -> GpuMonth:
        _check_report_client(config, path)  # its token is config: exit 2
        return gpu_history(cfg, path, span, PUBLISHED_GPU_SERIES)

    return read


def _quota_history(config: Config, path: str) -> QuotaHistory | None:
    """The month's quota history as the exporter published it, where report.prometheus says."""
    cfg = config.report.prometheus
    if cfg is None:
        return None
    published = QuotaSeries(QUOTA_NOMINAL.name, QUOTA_LENDING_LIMIT.name)

    def read(month: Month) -> object:
        _check_report_client(config, path)  # its token is config: exit 2
        return quota_history(cfg, path, month, published)

    return read


if __name__ == "__main__":
    sys.exit(main())
