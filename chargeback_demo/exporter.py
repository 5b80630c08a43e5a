"""The real exporter command line, pointed at the simulated cluster through a written config."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from chargeback_demo.stack import DemoStack
from exporter.cli import main as exporter_main
from exporter.clock import Clock, system_clock

__all__ = ["main"]

USAGE = """usage: python -m chargeback_demo [exporter flags] [report [report flags]]

The exporter on the simulated cluster: starts the fake upstreams on loopback, writes their
config file and passes it as --config.file; every other flag goes to the exporter's own
command line, whose help follows. `make demo` adds Prometheus with the committed rules.
"""


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
    stack = DemoStack(clock=clock, dcgm_port=port, dcgm_prometheus=through).start()
    try:
        return exporter_main(["--config.file", str(stack.write_config()), *args], clock)
    finally:
        stack.stop()


def _asks_for_help(args: Sequence[str]) -> bool:
    """Whether argparse would print help for these arguments (`--` ends the options)."""
    options = args[: args.index("--")] if "--" in args else args
    return any(a in ("-h", "--help") for a in options)
