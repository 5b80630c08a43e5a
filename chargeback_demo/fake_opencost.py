"""A fake OpenCost that speaks the real Allocation and Assets API over the simulated cluster.

It follows a current build (no `status` in the envelope, numbers rounded to 5 decimals, one
merged `__idle__`, idle clamped at zero) and can be switched to the pre-2025 envelope. Error
bodies are the real ones: a bad `window` is a 400 whose plain-text body has a JSON error
appended, an unknown path is a plain-text 404.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from chargeback_demo.cluster import Cluster, Usage
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response, text_response
from chargeback_demo.opencost_json import (
    PROPS,
    accumulate,
    iso,
    merge_rows,
    render,
    round5,
    sanitise,
    share_idle,
)
from exporter.clock import Clock, system_clock

__all__ = ["FakeOpenCost", "parse_window"]

_DURATION = re.compile(r"^(\d+)(m|h|d|w)$")
_BOOL_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
DEFAULT_AGGREGATE = ("cluster", "node", "namespace", "pod", "container")


def _bool(value: str | None) -> bool:
    # Go's strconv.ParseBool: anything else is silently false.
    return value in _BOOL_TRUE


def parse_window(text: str, now: datetime) -> tuple[datetime, datetime]:
    """OpenCost's window grammar (durations rounded as since 2024, pairs, named windows)."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    named = {
        "today": (today, today + timedelta(days=1)),
        "yesterday": (today - timedelta(days=1), today),
        "month": (today.replace(day=1), now),
        "week": (today - timedelta(days=(today.weekday() + 1) % 7), now),
    }
    if text in named:
        return named[text]
    if text == "lastmonth":
        first = today.replace(day=1)
        return (first - timedelta(days=1)).replace(day=1), first
    if m := _DURATION.match(text):
        count, unit = int(m.group(1)), m.group(2)
        if unit == "m":
            end = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
            return end - timedelta(minutes=count), end
        if unit == "h":
            end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
            return end - timedelta(hours=count), end
        end = today + timedelta(days=1)
        return end - timedelta(days=count * (7 if unit == "w" else 1)), end
    for sep in (",", "-"):
        parts = text.split(sep)
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return tuple(datetime.fromtimestamp(int(p), UTC) for p in parts)  # type: ignore[return-value]
    parts = text.split(",")
    if len(parts) == 2:
        try:
            start, end = (datetime.fromisoformat(p.replace("Z", "+00:00")) for p in parts)
        except ValueError:
            pass
        else:
            return start.astimezone(UTC), end.astimezone(UTC)
    raise ValueError(f"illegal window: {text}")


@dataclass
class FakeOpenCost:
    """The fake's state: the cluster it reports on, its clock, and an injectable fault."""

    cluster: Cluster
    clock: Clock = system_clock
    old_envelope: bool = False
    # "", "500", "garbage", "html", "slow", "nulls", "empty" (`data: [{}]`, what a lost
    # Prometheus can give) or "huge" (one allocation's gpuCost is 1e308)
    fault: str = ""
    delay_seconds: float = 0.0

    def handle(self, request: FakeRequest) -> FakeResponse:
        """Route one request the way OpenCost's router does."""
        if self.fault == "slow":
            time.sleep(self.delay_seconds)
        if self.fault == "500":
            return self._error(500, "error computing allocations: Prometheus unavailable")
        if self.fault == "html":
            return text_response(502, "<html><body>Bad Gateway</body></html>", "text/html")
        if request.path in ("/allocation", "/allocation/compute"):
            return self._allocation(request)
        if request.path == "/assets":
            return self._assets(request)
        if request.path == "/healthz":
            return FakeResponse(200, b"")
        return text_response(404, "404 page not found\n")

    def _envelope(self, data: Any) -> FakeResponse:
        if self.fault == "garbage":
            return json_response(200, {"code": 200, "data": [{"x": "not an allocation"}]})
        if self.fault == "empty":
            return json_response(200, {"code": 200, "data": [{}]})
        if self.fault == "huge" and isinstance(data, list):
            for step in data:
                name = next((k for k in sorted(step or {}) if k != "__idle__"), None)
                if name is not None and "gpuCost" in step[name]:
                    step[name]["gpuCost"] = 1e308
                    break
        payload: dict[str, Any] = {"code": 200, "data": data}
        if self.old_envelope:
            payload = {"code": 200, "status": "success", "data": data}
        return json_response(200, payload)

    def _error(self, code: int, message: str) -> FakeResponse:
        if self.old_envelope:
            body = {"code": code, "status": "", "data": None, "message": f"Error: {message}"}
            return json_response(code, body)
        return json_response(code, {"code": code, "data": None, "message": message})

    def _allocation(self, request: FakeRequest) -> FakeResponse:
        now = self.clock().astimezone(UTC)
        raw_window = request.arg("window", "") or ""
        try:
            start, end = parse_window(raw_window, now)
        except ValueError as exc:
            # OpenCost writes the 400 text, does not return, then appends the 500 JSON.
            body = (
                f"Invalid 'window' parameter: {exc}\n"
                '{"code":500,"data":null,"message":"illegal window: [nil, nil)"}\n'
            )
            return text_response(400, body)
        aggregate = self._aggregate(request.arg("aggregate"))
        step = _step(request.arg("step"), end - start)
        summed = _bool(request.arg("accumulate"))
        sets = []
        for s, e in _steps(start, end, step):
            sets.append(self._set(s, min(e, now), request, aggregate) if s < now else {})
        if summed and len(sets) > 1:
            sets = [accumulate(sets)]
        kept = [s for s in sets if s]
        return self._envelope(kept or None)  # OpenCost drops empty steps; none at all is null

    def _aggregate(self, value: str | None) -> tuple[str, ...]:
        if value is None:
            return DEFAULT_AGGREGATE
        known = {p.lower(): p for p in PROPS}
        out = []
        for part in value.split(","):
            part = part.strip()
            if part.lower() in known:
                out.append(known[part.lower()])
            elif part.startswith("label:"):
                out.append("label:" + sanitise(part[6:]))
        return tuple(out)  # unknown values are silently dropped, as upstream does

    def _set(
        self, start: datetime, end: datetime, request: FakeRequest, aggregate: tuple[str, ...]
    ) -> dict[str, Any]:
        usages = self.cluster.usage(start, end) if end > start else []
        rows = [self._row(u, start, end) for u in usages]
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(_key(row, aggregate), []).append(row)
        meta = _bool(request.arg("includeAggregatedMetadata"))
        out = {key: merge_rows(key, members, meta) for key, members in sorted(groups.items())}
        if _bool(request.arg("includeIdle")) and end > start:
            idle: dict[str, Any] | None = self._idle(rows, start, end)
            if idle is not None and _bool(request.arg("shareIdle")):
                idle = share_idle(out, idle)
            if idle is not None:
                out["__idle__"] = idle
        return out

    def _row(self, u: Usage, start: datetime, end: datetime) -> dict[str, Any]:
        c, w = self.cluster, u.workload
        labels = {sanitise(k): v for k, v in w.labels.items()}
        costs = {
            "cpuCost": u.cpu_core_hours * c.cpu_price,
            "gpuCost": u.gpu_hours * c.gpu_price,
            "ramCost": u.ram_gib_hours * c.ram_price,
            "pvCost": u.pv_gib_hours * c.pv_price,
            "networkCost": u.network_gib * c.network_price,
        }
        hours = u.minutes / 60.0
        return {
            "properties": {
                "cluster": c.name,
                "node": c.node,
                "namespace": w.namespace,
                "controllerKind": w.kind,
                "controller": w.controller,
                "pod": w.pod,
                "container": "main",
                "labels": labels,
                "namespaceLabels": {"kubernetes_io_metadata_name": w.namespace},
                # Annotations, sanitised like labels; omitempty, as OpenCost writes them.
                **_annotations("annotations", w.annotations),
                **_annotations("namespaceAnnotations", c.namespace_annotations.get(w.namespace)),
            },
            "window": {"start": iso(start), "end": iso(end)},
            "start": iso(u.start),
            "end": iso(u.end),
            "minutes": u.minutes,
            "cpuCoreHours": u.cpu_core_hours,
            "cpuCores": w.cpu if hours else 0,
            "gpuHours": u.gpu_hours,
            "gpuCount": len(w.gpus),
            "ramByteHours": u.ram_gib_hours * 2**30,
            "ramBytes": w.ram_gib * 2**30,
            "pvByteHours": u.pv_gib_hours * 2**30,
            "pvBytes": w.pv_gib * 2**30,
            "networkTransferBytes": u.network_gib * 2**30,
            "gpuAllocation": _gpu_allocation(c.gpu_model, w.gpus),
            **costs,
        }

    def _idle(self, rows: list[dict[str, Any]], start: datetime, end: datetime) -> dict[str, Any]:
        capacity = self.cluster.capacity_cost(start, end)
        idle: dict[str, float | None] = {
            f"{r}Cost": max(0.0, capacity[r] - sum(row[f"{r}Cost"] for row in rows))
            for r in ("cpu", "gpu", "ram")
        }
        if self.fault == "nulls":
            idle["ramCost"] = None
        row = {
            "properties": {"cluster": self.cluster.name, "node": self.cluster.node},
            "window": {"start": iso(start), "end": iso(end)},
            "start": iso(start),
            "end": iso(end),
            "minutes": (end - start).total_seconds() / 60.0,
            **idle,
        }
        return render("__idle__", row)

    def _assets(self, request: FakeRequest) -> FakeResponse:
        now = self.clock().astimezone(UTC)
        try:
            start, end = parse_window(request.arg("window", "") or "", now)
        except ValueError as exc:
            return text_response(400, f"Invalid 'window' parameter: {exc}\n")
        end = min(end, now)
        c = self.cluster
        cost = c.capacity_cost(start, end) if end > start else {"cpu": 0, "gpu": 0, "ram": 0}
        hours = max(0.0, (end - start).total_seconds() / 3600.0)
        undefined = "__undefined__/__undefined__/__undefined__"
        key = f"{undefined}/Compute/{c.name}/Node/Kubernetes/{c.node}/{c.node}"
        node = {
            "type": "Node",
            "properties": {
                "category": "Compute",
                "provider": "custom",
                "service": "Kubernetes",
                "cluster": c.name,
                "name": c.node,
                "providerID": c.node,
            },
            "labels": {
                "kubernetes_io_hostname": c.node,
                # GPU feature discovery's node label, sanitised the way OpenCost does.
                "nvidia_com_gpu_product": c.gpu_model.replace(" ", "-"),
            },
            "window": {"start": iso(start), "end": iso(end)},
            "start": iso(start),
            "end": iso(end),
            "minutes": hours * 60,
            "cpuCores": c.cpu_cores,
            "ramBytes": c.ram_gib * 2**30,
            "GPUHours": c.gpu_count * hours,
            "gpuCount": c.gpu_count,
            "cpuCost": cost["cpu"],
            "gpuCost": cost["gpu"],
            "ramCost": cost["ram"],
            "totalCost": sum(cost.values()),
        }
        return self._envelope(
            {key: {k: round5(v) if isinstance(v, float) else v for k, v in node.items()}}
        )


def _annotations(field: str, annotations: Mapping[str, str] | None) -> dict[str, Any]:
    if not annotations:
        return {}
    return {field: {sanitise(k): v for k, v in sorted(annotations.items())}}


def _gpu_allocation(model: str, gpus: Sequence[int]) -> dict[str, Any] | None:
    """OpenCost's gpuAllocation as it reads DCGM's labels: null for a pod without a GPU."""
    if not gpus:
        return None
    return {
        "gpuDevice": f"nvidia{gpus[0]}",
        "gpuModel": model,
        "isGPUShared": False,
        "gpuUsageAverage": None,
        "gpuRequestAverage": float(len(gpus)),
    }


def _step(value: str | None, whole: timedelta) -> timedelta:
    if value and (m := _DURATION.match(value)):
        unit = {"m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return timedelta(seconds=int(m.group(1)) * unit)
    return whole  # unparseable or absent: one set for the whole window


def _steps(start: datetime, end: datetime, step: timedelta) -> Iterable[tuple[datetime, datetime]]:
    # Steps go forward from the start and the last one is not clipped, as upstream does.
    t = start
    while t < end:
        yield t, t + step
        t += step


def _key(row: dict[str, Any], aggregate: tuple[str, ...]) -> str:
    props = row["properties"]
    parts = []
    for prop in aggregate:
        if prop.startswith("label:"):
            parts.append(props["labels"].get(prop[6:], "__unallocated__"))
        else:
            parts.append(props.get(prop) or "__unallocated__")
    return "/".join(parts)
