"""Logging set-up shared by the command line and the refresh worker process."""

from __future__ import annotations

import logging
import sys

from exporter import redact

__all__ = ["FORMAT", "configure"]

FORMAT = "ts=%(asctime)s level=%(levelname)s logger=%(name)s msg=%(message)s"


def configure(level: int | str) -> None:
    """Logfmt-style lines on stderr, httpx quiet, and every record redacted before it leaves."""
    logging.basicConfig(level=level, format=FORMAT, stream=sys.stderr)
    # httpx logs every request at INFO; one line per failed refresh is ours to write.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # Whatever logs it (we, httpx, httpcore), no record leaves with a known secret in it.
    redact.install()
