"""HTTP clients, one per upstream: call timeouts, verified TLS, redacted credentials, lanes."""

from __future__ import annotations

import queue
import ssl
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

import httpx

from exporter import __version__
from exporter.files import check_regular_file
from exporter.redact import register
from exporter.sources.bounded import BoundedTransport
from exporter.sources.proxies import environment_proxies

__all__ = [
    "KEEP_ALIVE",
    "MAX_CONNECT",
    "USER_AGENT",
    "Sending",
    "lanes",
    "lanes_like",
    "make_client",
    "sending",
    "tls_context",
]

USER_AGENT = f"gpu-chargeback-exporter/{__version__}"
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "x-litellm-api-key")
MAX_CONNECT = 5.0
# Connections are kept between the calls of a refresh (a call's deadline bounds each socket
# operation, so a kept connection needs no watchdog), for less time than servers keep an idle
# one (uvicorn, in front of LiteLLM, 5 s by default): a connection the server has closed as a
# request goes out fails that request.
_KEPT_FOR = 4.0
_LANE = httpx.Limits(max_connections=None, max_keepalive_connections=1, keepalive_expiry=_KEPT_FOR)
KEEP_ALIVE = httpx.Limits(
    max_connections=None, max_keepalive_connections=64, keepalive_expiry=_KEPT_FOR
)


def make_client(
    base_url: str,
    timeout: timedelta,
    *,
    headers: Mapping[str, str] | None = None,
    ca_file: str | None = None,
    verify: ssl.SSLContext | bool | None = None,
    transport: httpx.BaseTransport | None = None,
    limits: httpx.Limits = KEEP_ALIVE,
) -> httpx.Client:
    """One client per upstream: `timeout` bounds each call, TLS is verified (by `verify`, or
    against `ca_file` when given), and credentials in `headers` are registered for redaction."""
    for name, value in (headers or {}).items():
        if name.lower() in _CREDENTIAL_HEADERS:
            register(f"{base_url} {name.lower()}", value)
            register(f"{base_url} {name.lower()} credential", value.partition(" ")[2].strip())
    if verify is None:
        verify = tls_context(ca_file) if ca_file else True
    seconds = timeout.total_seconds()
    through = sending(verify, limits, transport)
    client = httpx.Client(
        base_url=base_url,
        timeout=httpx.Timeout(seconds, connect=min(seconds, MAX_CONNECT)),
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        transport=through.transport,
        mounts=through.mounts,
        follow_redirects=True,
    )
    recipe = _Recipe(base_url, timeout, dict(headers or {}), verify, transport)
    _RECIPES[client] = recipe
    return client


@dataclass(frozen=True)
class Sending:
    """What a client sends through: its transport, and the proxies' by URL pattern (None: the
    transport, for a host the environment sends to directly)."""

    transport: httpx.BaseTransport
    mounts: dict[str, httpx.BaseTransport | None]


def sending(
    verify: ssl.SSLContext | bool, limits: httpx.Limits, transport: httpx.BaseTransport | None
) -> Sending:
    """Transports whose every socket operation ends by the running call's deadline (bounded.py):
    one direct and one per proxy the environment names, as httpx would build them; or
    `transport` as it is (a mock, which no proxy is put in front of, as in httpx)."""
    if transport is not None:
        return Sending(transport, {})
    mounts: dict[str, httpx.BaseTransport | None] = {
        pattern: None
        if proxy is None
        else BoundedTransport(verify=verify, limits=limits, proxy=proxy)
        for pattern, proxy in environment_proxies().items()
    }
    return Sending(BoundedTransport(verify=verify, limits=limits), mounts)


def lanes_like(
    client: httpx.Client,
    timeout: timedelta,
    verify: ssl.SSLContext | bool,
    transport: httpx.BaseTransport | None,
) -> None:
    """Let the lanes of `client` (made otherwise than by make_client) be made by make_client
    with these settings and no base URL."""
    _RECIPES[client] = _Recipe("", timeout, {}, verify, transport)


@contextmanager
def lanes(client: httpx.Client, count: int) -> Iterator[queue.SimpleQueue[httpx.Client]]:
    """`count` clients like `client`, one per concurrent caller, closed on leaving.

    httpx's connection pool looks at every connection and every waiting request each time a
    request starts or ends, so many callers on one pool cost more than their calls; a caller
    with a pool (and a connection) of its own keeps that cost flat. A client not made by
    make_client is shared as it is.
    """
    recipe = _RECIPES.get(client)
    made = [recipe.make() for _ in range(count)] if recipe is not None else []
    free: queue.SimpleQueue[httpx.Client] = queue.SimpleQueue()
    for lane in made or [client] * count:
        free.put(lane)
    try:
        yield free
    finally:
        for lane in made:
            lane.close()


@dataclass
class _Recipe:
    """How make_client made a client, to make lanes like it."""

    base_url: str
    timeout: timedelta
    headers: dict[str, str]
    verify: ssl.SSLContext | bool
    transport: httpx.BaseTransport | None

    def make(self) -> httpx.Client:
        if self.verify is True:  # loading the system's CAs once, not once per lane
            self.verify = httpx.create_ssl_context()
        return make_client(
            self.base_url,
            self.timeout,
            headers=self.headers,
            verify=self.verify,
            transport=self.transport,
            limits=_LANE,
        )


_RECIPES: weakref.WeakKeyDictionary[httpx.Client, _Recipe] = weakref.WeakKeyDictionary()


def tls_context(ca_file: str) -> ssl.SSLContext:
    """A verifying TLS context that trusts `ca_file`; ValueError (a config error) if unusable."""
    try:
        check_regular_file(ca_file)  # ssl would wait forever on a FIFO
        return ssl.create_default_context(cafile=ca_file)
    except OSError as exc:  # ssl.SSLError included
        message = f"ca_file {ca_file}: cannot load: {exc.strerror or exc}"
        raise ValueError(message) from None
