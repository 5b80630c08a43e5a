"""Kueue lists from the Kubernetes API: every page of a list, the version fallback, RBAC errors.

A list that does not add up (fewer items than `remainingItemCount` promised, more pages than it
allows) fails the read; an expired continue token restarts the list once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

from exporter.config.schema import KueueConfig
from exporter.errors import (
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamTooLarge,
)
from exporter.sources.checks import WRONG_TYPE, BadRecord
from exporter.sources.http import get_bytes, not_json
from exporter.sources.kueue.records import SOURCE
from exporter.sources.kueue.shapes import as_array, as_object, as_string

__all__ = ["GROUP", "list_objects", "list_queues"]

GROUP = "kueue.x-k8s.io"
# A hard cap on pages whatever the server says: 1000 pages of up to 5000 queues is far more
# than any cluster has, and a list that never ends must not make endless requests.
_MAX_PAGES = 1000


def list_queues(client: httpx.Client, cfg: KueueConfig) -> tuple[str, list[Any]]:
    """Every ClusterQueue, in the first API version the server serves, and that version."""
    versions = ("v1beta2", "v1beta1") if cfg.api_version == "auto" else (cfg.api_version,)
    for version in versions:
        try:
            return version, list_objects(client, version, "clusterqueues", cfg.page_size)
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


def list_objects(client: httpx.Client, version: str, plural: str, page_size: int) -> list[Any]:
    """Every item of one cluster-scoped Kueue list, all pages read."""
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
        chunk = as_array(page["items"], f"{plural} list items")
        meta = as_object(page.get("metadata"), "list metadata")
        token = as_string(meta.get("continue"), "continue")
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


def _rbac(plural: str) -> str:
    return f"list on {plural} in API group {GROUP}"
