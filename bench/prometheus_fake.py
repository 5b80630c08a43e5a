"""A Prometheus that has scraped the synthetic cluster's dcgm-exporters, for DCGM's Prometheus mode.

It answers the instant queries the DCGM source sends (`/api/v1/query`): the mean utilisation
of each GPU (`avg by (...) (avg_over_time(<metric>[...]))`) with the labels asked for, and
the idle subqueries (`sum_over_time(...)`) with a count of idle steps per held GPU; the mean
power draw likewise, and an empty vector for a metric the exporters do not send. The series
are the fake dcgm-exporters' own, read once; the answers are as large as a real Prometheus's
(one series per GPU and metric), which is what the exporter's side of the read costs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.httpfake import FakeRequest, FakeResponse, Handler, json_response

__all__ = ["FakePrometheus"]

_BY = re.compile(r"avg by \(([^)]*)\)")
# Longest first: a query is matched by the first metric its text contains.
_METRICS = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL")
_IDLE_STEPS = 24.0  # two hours of 5-minute steps below the threshold, per held GPU and day

Series = list[tuple[dict[str, str], float]]


class FakePrometheus:
    """Answers DCGM's instant queries from the series of every node's dcgm-exporter."""

    def __init__(self, endpoints: Callable[[], list[Handler]]) -> None:
        self._endpoints = endpoints
        self._series: dict[str, Series] | None = None
        self._lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> FakeResponse:
        if request.path != "/api/v1/query":
            return FakeResponse(404, b"404 page not found\n")
        expr = request.arg("query") or ""
        metric = next((m for m in _METRICS if m in expr), "")
        by = _BY.search(expr)
        if by is None:
            return json_response(400, {"status": "error", "errorType": "bad_data", "error": expr})
        keep = [label.strip() for label in by.group(1).split(",")]
        idle = expr.startswith("sum_over_time(")
        result = []
        for labels, value in self._all().get(metric, []):
            if idle and not labels.get("pod"):
                continue
            kept = {k: labels[k] for k in keep if labels.get(k)}
            shown = _IDLE_STEPS if idle else value
            result.append({"metric": kept, "value": [0, repr(shown)]})
        return json_response(
            200, {"status": "success", "data": {"resultType": "vector", "result": result}}
        )

    def _all(self) -> dict[str, Series]:
        with self._lock:
            if self._series is None:
                self._series = self._read()
            return self._series

    def _read(self) -> dict[str, Series]:
        found: dict[str, Series] = {}
        for handler in self._endpoints():
            text = handler(FakeRequest("GET", "/metrics", {}, {})).body.decode()
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    if sample.name in _METRICS:
                        found.setdefault(sample.name, []).append((sample.labels, sample.value))
        return found
