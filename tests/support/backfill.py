"""A Prometheus whose only data is an OpenMetrics text backfilled with promtool."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chargeback_demo.prometheus import start_prometheus, stop, wait_ready


@contextmanager
def backfilled_prometheus(work: Path, openmetrics: str) -> Iterator[str]:
    """Start a Prometheus over `openmetrics` (ending `# EOF`), backfilled into `work`; its URL."""
    source = work / "backfill.om"
    source.write_text(openmetrics, encoding="utf-8")
    # One block for the whole span: promtool's default 2 h blocks take minutes on a busy machine.
    subprocess.run(
        [
            "promtool",
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--max-block-duration=1000h",
            str(source),
            str(work / "data"),
        ],
        check=True,
        capture_output=True,
    )
    # Retention is long so the backfilled blocks stay, whatever the machine's date.
    proc, url = start_prometheus(
        work, targets=[], extra_args=["--storage.tsdb.retention.time=100y"]
    )
    try:
        wait_ready(proc, f"{url}/-/ready")
        yield url
    finally:
        stop(proc)
