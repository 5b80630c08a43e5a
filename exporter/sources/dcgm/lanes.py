"""DCGM's scrapers, one per concurrent call: the light client where it can send every URL,
else httpx lanes (exporter/sources/clients.py).

The light client (exporter/sources/http_light) is attached to a DCGM client when it is built
without a test transport and the environment names no proxy (it does not speak to one); a
refresh whose every URL it sends as written goes through it, any other through httpx. Both
read through the same boundary (exporter/sources/http.py): the same deadlines, retries, size
bound and errors.
"""

from __future__ import annotations

import queue
import ssl
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import partial

import httpx

from exporter.sources.clients import KEEP_ALIVE, USER_AGENT, lanes
from exporter.sources.http import get_text
from exporter.sources.http_light import LightClient, LightSettings, Target, light_target
from exporter.sources.proxies import environment_proxies

__all__ = ["Scraper", "go_light", "scrapers"]

SOURCE = "dcgm"
# GET a URL's body as text (the source's name is bound in).
Scraper = Callable[[str], str]

_LIGHT: weakref.WeakKeyDictionary[httpx.Client, LightSettings] = weakref.WeakKeyDictionary()
# Each client's URLs read into targets once, not once a refresh (discovered pods come and go:
# past this many the cache starts again, so a gone pod's URL is not kept for the process's life).
_TARGETS: weakref.WeakKeyDictionary[httpx.Client, dict[str, Target | None]] = (
    weakref.WeakKeyDictionary()
)
_MAX_TARGETS = 50_000
_TARGETS_LOCK = threading.Lock()


def go_light(
    client: httpx.Client,
    timeout: timedelta,
    verify: ssl.SSLContext | bool,
    *,
    follow_redirects: bool,
) -> None:
    """Let `client`'s scrapes go through the light client, unless the environment names a
    proxy (then httpx sends them, through it)."""
    if any(proxy is not None for proxy in environment_proxies().values()):
        return
    _LIGHT[client] = LightSettings(
        timeout=timeout.total_seconds(),
        verify=verify,
        follow_redirects=follow_redirects,
        user_agent=USER_AGENT,
        kept_for=KEEP_ALIVE.keepalive_expiry or 0.0,
    )


@contextmanager
def scrapers(
    client: httpx.Client, urls: Sequence[str], count: int
) -> Iterator[queue.SimpleQueue[Scraper]]:
    """`count` scrapers for these URLs, one per concurrent caller, closed on leaving."""
    settings = _LIGHT.get(client)
    targets = _targets(client, urls) if settings is not None else {}
    free: queue.SimpleQueue[Scraper] = queue.SimpleQueue()
    if settings is None or not all(targets.values()):
        with lanes(client, count) as httpx_lanes:
            for _ in range(count):
                free.put(partial(get_text, httpx_lanes.get(), SOURCE))
            yield free
        return
    sent = {url: target for url, target in targets.items() if target is not None}
    made = [LightClient(settings, sent) for _ in range(count)]
    for light in made:
        free.put(partial(light.get_text, SOURCE))
    try:
        yield free
    finally:
        for light in made:
            light.close()


def _targets(client: httpx.Client, urls: Sequence[str]) -> dict[str, Target | None]:
    with _TARGETS_LOCK:
        known = _TARGETS.setdefault(client, {})
        if len(known) > _MAX_TARGETS:
            known.clear()
        out: dict[str, Target | None] = {}
        for url in urls:
            if url not in known:
                known[url] = light_target(url)
            out[url] = known[url]
        return out
