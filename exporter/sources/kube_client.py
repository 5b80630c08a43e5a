"""Clients for the Kubernetes API: in cluster, from a kubeconfig, or an explicit URL and token."""

from __future__ import annotations

import os
import ssl
from collections.abc import Generator
from dataclasses import dataclass, field
from functools import partial

import httpx

from exporter.clock import Clock, system_clock
from exporter.config.schema import KueueConfig
from exporter.credentials import check_secret, read_secret_file
from exporter.errors import ConfigError, ConfigIssue, UpstreamCredentialError
from exporter.redact import register
from exporter.sources.clients import make_client
from exporter.sources.kube import kubeconfig
from exporter.sources.kube.exec_plugin import ExecAuth
from exporter.sources.kube.kubeconfig import ExecSpec, Located
from exporter.sources.kube.tls import Trust, load_pair
from exporter.sources.kube.tls import context as tls

__all__ = ["SERVICE_ACCOUNT_DIR", "build_client"]

SOURCE = "kueue"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class _Bearer(httpx.Auth):
    """Sends `Authorization: Bearer`; a token file is re-read per request (tokens rotate)."""

    def __init__(self, *, token: str | None = None, token_file: str | None = None) -> None:
        self._token = token
        self._file = token_file
        if token:
            register(f"{SOURCE} bearer token", token)

    def __repr__(self) -> str:
        return "_Bearer(<redacted>)"

    def current(self) -> str:
        """The token now: checked, so a newline or NUL in it never reaches httpx's errors."""
        if self._file is not None:
            return read_secret_file(self._file)
        return check_secret(self._token or "", "the token")

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Attach the token to the request."""
        try:
            token = self.current()
        except ValueError as exc:
            # A rotated token that is unreadable or malformed fails this refresh, not the process;
            # the upstream was never asked, so it is the credential, not the network.
            raise UpstreamCredentialError(f"{SOURCE}: {exc}") from None
        # Registered on every read: a projected token rotates, and any of them may be echoed.
        register(f"{SOURCE} bearer token", token)
        request.headers["Authorization"] = f"Bearer {token}"
        yield request


@dataclass(frozen=True)
class _Endpoint:
    """Where the API server is and how to trust it and log in to it."""

    server: str
    auth: httpx.Auth | None = None
    trust: Trust = field(default_factory=Trust)
    insecure: bool = False
    exec_plugin: ExecSpec | None = None


def build_client(
    cfg: KueueConfig,
    transport: httpx.BaseTransport | None = None,
    *,
    service_account_dir: str = SERVICE_ACCOUNT_DIR,
    clock: Clock = system_clock,
) -> httpx.Client:
    """A client for the API server: in-cluster, from a kubeconfig, or an explicit url."""
    if cfg.in_cluster:
        endpoint = _in_cluster(service_account_dir)
    elif cfg.kubeconfig is not None:
        endpoint = _from_kubeconfig(cfg.kubeconfig, cfg.insecure_skip_tls_verify)
    else:
        endpoint = _Endpoint(
            str(cfg.url),
            _Bearer(token_file=cfg.token_file) if cfg.token_file else None,
            Trust(ca=_ca_file(cfg.ca_file) if cfg.ca_file else None),
        )
    if isinstance(endpoint.auth, _Bearer):
        endpoint.auth.current()  # a bad token is a config error at start, not a failed refresh
    verify: ssl.SSLContext | bool = True
    if transport is None and endpoint.server.startswith("https://"):
        verify = False if cfg.insecure_skip_tls_verify or endpoint.insecure else tls(endpoint.trust)
    client = make_client(endpoint.server, cfg.timeout, verify=verify, transport=transport)
    if endpoint.exec_plugin is not None:
        # A certificate from the plugin is loaded into the client's own TLS context.
        loader = partial(load_pair, verify) if isinstance(verify, ssl.SSLContext) else None
        timeout = cfg.timeout.total_seconds()
        client.auth = ExecAuth(endpoint.exec_plugin, timeout, clock, loader)
    elif endpoint.auth is not None:
        client.auth = endpoint.auth
    return client


def _ca_file(file: str) -> tuple[Located, str | bytes]:
    return Located(file, None, "sources.kueue.ca_file"), file


def _in_cluster(sa_dir: str) -> _Endpoint:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        issue = ConfigIssue(None, "sources.kueue.in_cluster", "KUBERNETES_SERVICE_HOST is unset")
        raise ConfigError(sa_dir, [issue])
    host = f"[{host}]" if ":" in host else host  # an IPv6 service address
    ca_file = os.path.join(sa_dir, "ca.crt")
    return _Endpoint(
        f"https://{host}:{port}",
        _Bearer(token_file=os.path.join(sa_dir, "token")),
        Trust(ca=(Located(ca_file, None, "sources.kueue.in_cluster"), ca_file)),
    )


def _from_kubeconfig(path: str, allow_insecure: bool) -> _Endpoint:
    config = kubeconfig.load(path, allow_insecure=allow_insecure)
    auth: _Bearer | None = None
    if config.token is not None:
        where, token = config.token
        try:
            auth = _Bearer(token=check_secret(token, "the kubeconfig user's token"))
        except ValueError as exc:
            raise where.error(str(exc)) from None
    elif config.token_file is not None:
        auth = _Bearer(token_file=config.token_file)
    return _Endpoint(
        config.server,
        auth,
        Trust(ca=config.ca, cert=config.cert, key=config.key),
        insecure=config.insecure is not None,
        exec_plugin=config.exec,
    )


# --- fetching -----------------------------------------------------------------------------
