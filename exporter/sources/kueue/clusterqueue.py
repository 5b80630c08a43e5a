"""Kueue ClusterQueues decoded: one object to its quota rows, each quantity checked and bounded.

v1beta2 names the cohort `spec.cohortName`, v1beta1 `spec.cohort`. Quantities come in base units
(GPUs as counts, cores, bytes); an unset limit is +Inf, never 0. A bad quantity spoils only its
own row, which is dropped and counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import (
    DUPLICATE,
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    label,
)
from exporter.sources.kueue.quantity import parse_quantity
from exporter.sources.kueue.records import SOURCE, QuotaRecord
from exporter.sources.kueue.shapes import as_array, as_object, as_string

__all__ = ["parse_cluster_queue"]

# Quota bounds: no cluster has a billion GPUs, cores or pods, nor a zebibyte of memory; a
# larger quantity is corrupt, and bounded quota keeps the quota maths finite.
_MAX_UNITS = 1e9
_MAX_BYTES = 2.0**70


def parse_cluster_queue(
    item: Any, version: str = "v1beta2", tally: Tally | None = None
) -> list[QuotaRecord]:
    """One ClusterQueue object to its quota rows.

    With a `tally`, a bad resource (or a queue too broken to read) is dropped and counted
    there; without one, the first problem raises UpstreamPayloadError.
    """
    strict, tally = tally is None, Tally() if tally is None else tally
    try:
        return _cluster_queue(item, version, tally, strict)
    except BadRecord as exc:
        if strict:
            raise UpstreamPayloadError(f"{SOURCE}: {exc}") from None
        tally.drop(exc)
        return []


def _cluster_queue(item: Any, version: str, tally: Tally, strict: bool) -> list[QuotaRecord]:
    obj = as_object(item, "ClusterQueue")
    name = as_string(as_object(obj.get("metadata"), "ClusterQueue metadata").get("name"), "name")
    if not name:
        raise BadRecord(MISSING_FIELD, "a ClusterQueue has no metadata.name")
    # Queue, cohort, flavor and resource names all become label values.
    label(name, "a ClusterQueue's metadata.name")
    where = f"ClusterQueue {name!r}"
    spec = as_object(obj.get("spec"), f"{where} spec")
    cohort = as_string(spec.get("cohortName" if version == "v1beta2" else "cohort"), "cohort")
    label(cohort, f"{where} cohort")
    status = as_object(obj.get("status"), f"{where} status")
    usage = _status(status.get("flavorsUsage"), f"{where} flavorsUsage")
    out: list[QuotaRecord] = []
    for flavor, resource, limits in _quotas(spec, where):
        try:
            found = usage.get((flavor, resource), (0.0, 0.0))
            if isinstance(found, BadRecord):
                raise found
            nominal, borrowing, lending = _bounded(limits, resource, f"{where} {flavor}/{resource}")
            used, borrowed = _bounded(found, resource, f"{where} {flavor}/{resource} usage")
        except BadRecord as exc:
            if strict:
                raise
            tally.drop(exc)
            continue
        out.append(
            QuotaRecord(name, cohort, flavor, resource, nominal, borrowing, lending, used, borrowed)
        )
    return out


def _bounded(values: tuple[Any, ...], resource: str, what: str) -> tuple[float, ...]:
    """Each value a quantity in [0, bound) (or an unset limit, +Inf), else BadRecord."""
    high = _MAX_BYTES if "memory" in resource or "storage" in resource else _MAX_UNITS
    out = []
    for value in values:
        if isinstance(value, BadRecord):
            raise value
        if value != math.inf and not 0.0 <= value < high:
            raise BadRecord(OUT_OF_RANGE, f"{what} is {value:g}, expected 0..{high:g}")
        out.append(value)
    return tuple(out)


_Limits = tuple[float | BadRecord, float | BadRecord, float | BadRecord]


def _quotas(spec: Mapping[str, Any], where: str) -> list[tuple[str, str, _Limits]]:
    out: list[tuple[str, str, _Limits]] = []
    seen: set[tuple[str, str]] = set()
    for group in as_array(spec.get("resourceGroups"), f"{where} resourceGroups"):
        for flavor in as_array(
            as_object(group, "resourceGroup").get("flavors"), f"{where} flavors"
        ):
            fobj = as_object(flavor, f"{where} flavor")
            fname = as_string(fobj.get("name"), f"{where} flavor name")
            for res in as_array(fobj.get("resources"), f"{where} flavor {fname!r} resources"):
                robj = as_object(res, f"{where} resource")
                rname = as_string(robj.get("name"), f"{where} resource name")
                what = f"{where} {fname[:60]}/{rname[:60]}"
                if not fname or not rname:
                    raise BadRecord(MISSING_FIELD, f"{what}: missing name")
                label(fname, f"{where}: a flavor name")
                label(rname, f"{where}: a resource name")
                if (fname, rname) in seen:  # which of the two is meant cannot be known
                    raise BadRecord(DUPLICATE, f"{what}: repeated")
                seen.add((fname, rname))
                limits = (
                    _quantity(robj.get("nominalQuota"), f"{what} nominalQuota"),
                    _limit(robj.get("borrowingLimit"), f"{what} borrowingLimit"),
                    _limit(robj.get("lendingLimit"), f"{what} lendingLimit"),
                )
                out.append((fname, rname, limits))
    return out


def _status(value: Any, where: str) -> dict[tuple[str, str], tuple[float, float] | BadRecord]:
    out: dict[tuple[str, str], tuple[float, float] | BadRecord] = {}
    for flavor in as_array(value, where):
        fobj = as_object(flavor, where)
        fname = as_string(fobj.get("name"), f"{where} name")
        for res in as_array(fobj.get("resources"), f"{where} {fname} resources"):
            robj = as_object(res, f"{where} {fname} resource")
            rname = as_string(robj.get("name"), f"{where} {fname} resource name")
            what = f"{where} {fname}/{rname}"
            total = _quantity(robj.get("total", 0), f"{what} total")
            # Kueue always writes borrowed, but its docs show it omitted: missing means 0.
            borrowed = _quantity(robj.get("borrowed", 0), f"{what} borrowed")
            # A bad usage figure spoils only its own resource's row, dropped with it.
            if isinstance(total, BadRecord):
                out[(fname, rname)] = total
            elif isinstance(borrowed, BadRecord):
                out[(fname, rname)] = borrowed
            else:
                out[(fname, rname)] = (total, borrowed)
    return out


def _limit(value: Any, what: str) -> float | BadRecord:
    return math.inf if value is None else _quantity(value, what)


def _quantity(value: Any, what: str) -> float | BadRecord:
    """The quantity, or the reason it is bad, kept for the row it belongs to."""
    if value is None:
        return BadRecord(MISSING_FIELD, f"{what} is missing")
    try:
        return parse_quantity(value)
    except ValueError as exc:
        reason = NON_FINITE if "finite" in str(exc) else WRONG_TYPE
        return BadRecord(reason, f"{what}: {exc}")
