"""The real exporter command line, pointed at the simulated cluster through a written config."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from chargeback_demo.history import can_backfill, history_prometheus
from chargeback_demo.stack import DemoStack
from exporter.calendar import Month
from exporter.cli import main as exporter_main
from exporter.clock import Clock, system_clock

__all__ = ["HISTORY_SWITCH", "main"]

USAGE = """usage: python -m chargeback_demo [exporter flags] [report [report flags]]

The exporter on the simulated cluster: starts the fake upstreams on loopback, writes their
config file and passes it as --config.file; every other flag goes to the exporter's own
command line, whose help follows. `make demo` adds Prometheus with the committed rules.
`report --month YYYY-MM` (a closed month) backfills the exporter's own series of that month
into a Prometheus of its own when promtool and prometheus are installed, and reads the
month's idle GPU-hours, energy, CO2e and quotas from it (DEMO_HISTORY_PROMETHEUS: use that
Prometheus instead, as `make demo` prints; DEMO_HISTORY=off: no history, as without promtool).
"""
HISTORY_SWITCH = "DEMO_HISTORY"
NO_HISTORY = (
    "demo: promtool or prometheus is not installed (Debian: apt-get install prometheus): "
    "the month has no history to read its GPU operation from"
)


def main(argv: Sequence[str] | None = None, clock: Clock = system_clock) -> int:
    """Start the fakes, write their config file, and run the exporter's own `main` on it.

    Any exporter argument passes through: `python -m chargeback_demo report --format csv`,
    `python -m chargeback_demo --once`, `python -m chargeback_demo --web.listen-address :9999`.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if _asks_for_help(args):
        # The exporter's parser prints its help and exits before it reads a config: no fake
        # upstream has to listen for that.
        print(USAGE, flush=True)
        return exporter_main(args, clock)
    # Set by `make demo` and the end-to-end test: a Prometheus scraping the fake dcgm-exporter
    # on a fixed port, through which the exporter reads DCGM (chargeback_demo.run).
    port = int(os.environ.get("DEMO_DCGM_PORT", "0") or 0)
    through = os.environ.get("DEMO_DCGM_PROMETHEUS") or None
    # Set by `make demo`: its Prometheus, which holds the last closed month backfilled.
    history = os.environ.get("DEMO_HISTORY_PROMETHEUS") or None
    wanted = os.environ.get(HISTORY_SWITCH, "on") != "off"
    stack = DemoStack(
        clock=clock,
        dcgm_port=port,
        dcgm_prometheus=through,
        history_prometheus=history,
        true_up=True,
    ).start()
    try:
        with ExitStack() as scope:
            month = _closed_month(args, stack, clock)
            if history is None and month is not None and wanted:
                stack.history_prometheus = scope.enter_context(_history(stack, month))
            return exporter_main(["--config.file", str(stack.write_config()), *args], clock)
    finally:
        stack.stop()


def _closed_month(args: Sequence[str], stack: DemoStack, clock: Clock) -> Month | None:
    """The closed month a `report --month YYYY-MM` asks for; None for anything else (the
    exporter's own parser judges a bad month)."""
    if "report" not in args:
        return None
    text = next((a.partition("=")[2] for a in args if a.startswith("--month=")), None)
    if "--month" in args and args.index("--month") + 1 < len(args):
        text = args[args.index("--month") + 1]
    zone = stack.config().zone
    try:
        month = Month.parse(text, zone) if text else None
    except ValueError:
        return None
    return month if month is not None and month.end <= Month.of(clock(), zone).start else None


@contextmanager
def _history(stack: DemoStack, month: Month) -> Iterator[str | None]:
    """A Prometheus holding `month` of the exporter's own series; None (said once) without
    promtool and prometheus."""
    if not can_backfill():
        print(NO_HISTORY, file=sys.stderr, flush=True)
        yield None
        return
    with (
        tempfile.TemporaryDirectory(prefix="chargeback-demo-history-") as work,
        history_prometheus(Path(work), stack.cluster, stack.config(), month) as url,
    ):
        yield url


def _asks_for_help(args: Sequence[str]) -> bool:
    """Whether argparse would print help for these arguments (`--` ends the options)."""
    options = args[: args.index("--")] if "--" in args else args
    return any(a in ("-h", "--help") for a in options)
