"""The real exporter command line, pointed at the simulated cluster through a written config."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from chargeback_demo.stack import DemoStack
from exporter.cli import main as exporter_main
from exporter.clock import Clock, system_clock

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, clock: Clock = system_clock) -> int:
    """Start the fakes, write their config file, and run the exporter's own `main` on it.

    Any exporter argument passes through: `python -m chargeback_demo report --format csv`,
    `python -m chargeback_demo --once`, `python -m chargeback_demo --web.listen-address :9999`.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stack = DemoStack(clock=clock).start()
    try:
        return exporter_main(["--config.file", str(stack.write_config()), *args], clock)
    finally:
        stack.stop()
