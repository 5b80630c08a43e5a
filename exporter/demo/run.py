"""`make demo`: the exporter on the simulated cluster, plus Prometheus with the shipped rules."""

from __future__ import annotations

import os
import sys

from exporter.cli import main as exporter_main

LISTEN = os.environ.get("DEMO_LISTEN_ADDRESS", "127.0.0.1:10290")


def main() -> int:
    """Print where to look, then run the demo exporter in the foreground until Ctrl-C."""
    host, _, port = LISTEN.rpartition(":")
    print(
        f"gpu-chargeback-exporter demo: a simulated cluster behind fake upstreams.\n"
        f"  metrics:  http://{host}:{port}/metrics\n"
        f"  report:   .venv/bin/gpu-chargeback-exporter report --demo\n"
        f"  stop:     Ctrl-C\n",
        flush=True,
    )
    return exporter_main(["--demo", "--web.listen-address", LISTEN])


if __name__ == "__main__":
    sys.exit(main())
