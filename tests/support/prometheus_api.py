"""Helpers the end-to-end tests share: bounded polling and Prometheus HTTP API queries."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chargeback_demo

__all__ = ["CHECKOUT", "get", "poll", "query", "recorded"]

# Where `python -m chargeback_demo` finds the demo: it is not installed (only `exporter` is),
# so a child process starts in the checkout the tests import it from, whatever pytest's cwd.
CHECKOUT = Path(chargeback_demo.__file__).resolve().parents[1]


def get(url: str) -> bytes:
    """The body of a GET, with a short timeout."""
    with urllib.request.urlopen(url, timeout=5) as resp:
        body: bytes = resp.read()
        return body


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    """The result vector of an instant query against Prometheus at `prom`."""
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    doc = json.loads(get(url))
    assert doc["status"] == "success", doc
    result: list[dict[str, Any]] = doc["data"]["result"]
    return result


def poll(what: str, check: Callable[[], Any], deadline: float) -> Any:
    """Call `check` until it returns something truthy, or fail after `deadline` seconds."""
    end = time.monotonic() + deadline
    last: Any = None
    while time.monotonic() < end:
        last = check()
        if last:
            return last
        time.sleep(0.5)
    pytest.fail(f"timed out after {deadline:.0f}s waiting for {what} (last: {last!r})")


def recorded(prom: str, exprs: list[str]) -> dict[str, float] | None:
    """Each expression's single value, or None while any of them has not exactly one series."""
    got = {}
    for expr in exprs:
        result = query(prom, expr)
        if len(result) != 1:
            return None
        got[expr] = float(result[0]["value"][1])
    return got
