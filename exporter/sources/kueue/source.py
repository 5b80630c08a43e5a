"""Kueue source: ClusterQueue quota and usage from the Kubernetes API.

Upstream: `GET /apis/kueue.x-k8s.io/<version>/clusterqueues?limit=N` and `.../resourceflavors`
(both paged with `metadata.continue`); Cohort objects are not read. `api_version: auto` reads
v1beta2 and falls back to v1beta1 when v1beta2 is not served (Kueue < v0.15), mapping
`spec.cohort` to the v1beta2 `cohortName`. Records carry quantities in base units (GPUs as
counts, cores, bytes); an unset limit is +Inf, never 0. ResourceFlavors are read in the same
version, for the node labels that map each flavor's quota to nodes and so to a GPU price.

One ClusterQueue resource with a bad quantity (one ClusterQueue, if the object itself is
broken) is dropped and counted, and fails the refresh: quota feeds the money teams borrow and
lend. A list that does not add up (fewer items than `remainingItemCount` promised, more pages
than it allows, one queue twice with different contents) fails it too, and so does a list that
comes back empty after holding queues, until a later read says the same.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import msgspec

from exporter.config.schema import Config, KueueConfig
from exporter.errors import (
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamTooLarge,
)
from exporter.sources.checks import (
    DUPLICATE,
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Emptiness,
    Tally,
    dedupe,
    label,
    refuse_dropped,
)
from exporter.sources.http import get_bytes, not_json
from exporter.sources.kind import SourceKind, section
from exporter.sources.kube_client import build_client
from exporter.sources.kueue.flavors import FlavorRecord, parse_resource_flavors
from exporter.sources.kueue.quantity import parse_quantity
from exporter.sources.reading import Reading

__all__ = [
    "KIND",
    "KueueSnapshot",
    "QuotaRecord",
    "build_client",
    "fetch",
    "parse_cluster_queue",
]

SOURCE = "kueue"
GROUP = "kueue.x-k8s.io"
# A hard cap on pages whatever the server says: 1000 pages of up to 5000 queues is far more
# than any cluster has, and a list that never ends must not make endless requests.
_MAX_PAGES = 1000
# Quota bounds: no cluster has a billion GPUs, cores or pods, nor a zebibyte of memory; a
# larger quantity is corrupt, and bounded quota keeps the quota maths finite.
_MAX_UNITS = 1e9
_MAX_BYTES = 2.0**70
_T = TypeVar("_T", dict[str, Any], list[Any], str)


@dataclass(frozen=True)
class QuotaRecord:
    """Quota of one ClusterQueue for one flavor and resource, in base units."""

    cluster_queue: str
    cohort: str  # "" when the queue is in no cohort
    flavor: str
    resource: str
    nominal: float
    borrowing_limit: float = math.inf  # unset = unlimited
    lending_limit: float = math.inf  # unset = all of the unused nominal quota
    usage: float = 0.0  # admitted workloads (status.flavorsUsage)
    borrowed: float = 0.0  # status.flavorsUsage[].resources[].borrowed


@dataclass(frozen=True)
class KueueSnapshot:
    """Every ClusterQueue quota row of one refresh."""

    queues: tuple[QuotaRecord, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)
    flavors: tuple[FlavorRecord, ...] = ()  # ResourceFlavors, sorted by name

    def check_after(self, previous: object | None) -> None:
        """A completed list is the whole current state; a list empty after queues waits for a
        second read in fetch, where each client's reads are remembered."""
        del previous


# --- the client ---------------------------------------------------------------------------


def fetch(client: httpx.Client, config: Config, reading: Reading) -> KueueSnapshot:
    """Read every ClusterQueue (all pages) into quota records.

    The Kubernetes API answers with the current state: there is no window to ask for, so every
    reading gets the quotas as they are now.
    """
    del reading
    cfg = section(config.sources.kueue, SOURCE)
    version, items = _list_queues(client, cfg)
    tally = Tally()
    # The same ClusterQueue on two pages is kept once; two different versions of it fail.
    unique = dedupe(SOURCE, items, _item_name, tally)
    queues = [record for item in unique for record in parse_cluster_queue(item, version, tally)]
    # Flavors say which nodes (and so which GPU price) each flavor's quota stands for.
    flavors = parse_resource_flavors(
        _list(client, version, "resourceflavors", cfg.page_size), tally
    )
    # A quota row dropped would take its borrowed or lent share out of the money it moves.
    refuse_dropped(SOURCE, tally, "ClusterQueue resources or ResourceFlavors")
    lists = {"the ClusterQueue list": bool(items), "the ResourceFlavor list": bool(flavors)}
    _SEEN.setdefault(client, Emptiness()).check(SOURCE, lists)  # empty after data: wait
    return KueueSnapshot(tuple(sorted(queues, key=_queue_key)), tally.frozen(), flavors)


def _item_name(item: Any) -> object:
    # A nameless or broken item gets its own identity here; parsing then drops it.
    meta = item.get("metadata") if isinstance(item, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else ("unnamed", id(item))


def _list_queues(client: httpx.Client, cfg: KueueConfig) -> tuple[str, list[Any]]:
    versions = ("v1beta2", "v1beta1") if cfg.api_version == "auto" else (cfg.api_version,)
    for version in versions:
        try:
            return version, _list(client, version, "clusterqueues", cfg.page_size)
        except UpstreamStatusError as exc:
            if exc.status != 404:
                raise
            if version == versions[-1]:
                raise UpstreamStatusError(
                    f"{SOURCE}: HTTP 404 listing clusterqueues.{GROUP}/{version}: "
                    "the API server does not serve it (is Kueue installed?)",
                    404,
                ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _list(client: httpx.Client, version: str, plural: str, page_size: int) -> list[Any]:
    path = f"/apis/{GROUP}/{version}/{plural}"
    items: list[Any] = []
    token, restarted = "", False
    expected: int | None = None  # items the list will hold, when remainingItemCount says
    budget, pages = _MAX_PAGES, 0
    while pages < budget:
        params = {"limit": str(page_size)}
        if token:
            params["continue"] = token
        try:
            page = _get(client, path, params, plural)
        except UpstreamStatusError as exc:
            if exc.status != 410 or not token or restarted:
                raise
            # The continue token expired (etcd compaction); clients restart the list once.
            items, token, restarted, expected, budget, pages = [], "", True, None, _MAX_PAGES, 0
            continue
        pages += 1
        chunk, token, remaining = _list_page(page, path, plural)
        items.extend(chunk)
        if remaining is not None and expected is None:
            expected = len(items) + remaining
            # Pages of the size this one had, plus one for slack, and never above the cap.
            needed = pages + math.ceil(remaining / max(len(chunk), 1)) + 1
            if needed > _MAX_PAGES:
                # Refused now: reading up to the cap first would only ask for it in vain.
                raise UpstreamTooLarge(
                    f"{SOURCE}: {path} announces {expected} items, {needed} pages of "
                    f"{len(chunk)}: more than the {_MAX_PAGES} pages a refresh reads"
                )
            budget = needed
        if not token:
            if remaining or (expected is not None and len(items) != expected):
                raise UpstreamIncomplete(
                    f"{SOURCE}: {path} ended after {len(items)} items, "
                    f"but the server announced {expected}"
                )
            return items
    raise UpstreamIncomplete(f"{SOURCE}: {path} returned more than {budget} pages")


def _list_page(page: Any, path: str, plural: str) -> tuple[list[Any], str, int | None]:
    """One page of a Kubernetes list: its items, continue token and remainingItemCount."""
    if not isinstance(page, dict) or "items" not in page:
        raise UpstreamPayloadError(f"{SOURCE}: {path} did not return a Kubernetes list")
    try:
        chunk = _array(page["items"], f"{plural} list items")
        meta = _object(page.get("metadata"), "list metadata")
        token = _string(meta.get("continue"), "continue")
        remaining = meta.get("remainingItemCount")
        if remaining is not None and (
            isinstance(remaining, bool) or not isinstance(remaining, int) or remaining < 0
        ):
            raise BadRecord(WRONG_TYPE, f"remainingItemCount is {remaining!r}")
    except BadRecord as exc:
        raise UpstreamPayloadError(f"{SOURCE}: {path}: {exc}") from None
    return chunk, token, remaining


def _get(client: httpx.Client, path: str, params: Mapping[str, str], plural: str) -> Any:
    try:
        content = get_bytes(client, SOURCE, path, params)
    except UpstreamStatusError as exc:
        if exc.status == 401:
            raise UpstreamStatusError(
                f"{SOURCE}: HTTP 401 listing {plural}.{GROUP}: the API server rejected the "
                "bearer token; the exporter needs a valid service-account token with "
                f"{_rbac(plural)}",
                401,
            ) from None
        if exc.status == 403:
            raise UpstreamStatusError(
                f"{SOURCE}: HTTP 403 listing {plural}.{GROUP}: "
                f"the exporter's service account needs {_rbac(plural)}",
                403,
            ) from None
        raise
    try:
        # From the bytes, in C: a large list page is never held as text as well.
        return _JSON.decode(content)
    except msgspec.DecodeError:
        raise not_json(SOURCE, path, content) from None


_JSON = msgspec.json.Decoder()
_SEEN: weakref.WeakKeyDictionary[httpx.Client, Emptiness] = weakref.WeakKeyDictionary()


def _rbac(plural: str) -> str:
    return f"list on {plural} in API group {GROUP}"


# --- parsing ------------------------------------------------------------------------------


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
    obj = _object(item, "ClusterQueue")
    name = _string(_object(obj.get("metadata"), "ClusterQueue metadata").get("name"), "name")
    if not name:
        raise BadRecord(MISSING_FIELD, "a ClusterQueue has no metadata.name")
    # Queue, cohort, flavor and resource names all become label values.
    label(name, "a ClusterQueue's metadata.name")
    where = f"ClusterQueue {name!r}"
    spec = _object(obj.get("spec"), f"{where} spec")
    cohort = _string(spec.get("cohortName" if version == "v1beta2" else "cohort"), "cohort")
    label(cohort, f"{where} cohort")
    status = _object(obj.get("status"), f"{where} status")
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
    for group in _array(spec.get("resourceGroups"), f"{where} resourceGroups"):
        for flavor in _array(_object(group, "resourceGroup").get("flavors"), f"{where} flavors"):
            fobj = _object(flavor, f"{where} flavor")
            fname = _string(fobj.get("name"), f"{where} flavor name")
            for res in _array(fobj.get("resources"), f"{where} flavor {fname!r} resources"):
                robj = _object(res, f"{where} resource")
                rname = _string(robj.get("name"), f"{where} resource name")
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
    for flavor in _array(value, where):
        fobj = _object(flavor, where)
        fname = _string(fobj.get("name"), f"{where} name")
        for res in _array(fobj.get("resources"), f"{where} {fname} resources"):
            robj = _object(res, f"{where} {fname} resource")
            rname = _string(robj.get("name"), f"{where} {fname} resource name")
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


def _typed(value: Any, kind: type[_T], what: str) -> _T:
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise BadRecord(
            WRONG_TYPE, f"expected {kind.__name__} for {what}, got {type(value).__name__}"
        )
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    return _typed(value, dict, what)


def _array(value: Any, what: str) -> list[Any]:
    return _typed(value, list, what)


def _string(value: Any, what: str) -> str:
    return _typed(value, str, what)


def _queue_key(record: QuotaRecord) -> tuple[str, str, str]:
    return (record.cluster_queue, record.flavor, record.resource)


KIND = SourceKind(SOURCE, KueueSnapshot, lambda config: config.sources.kueue, build_client, fetch)
