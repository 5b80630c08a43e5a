"""Clients for the Kubernetes API: in cluster, from a kubeconfig, or an explicit URL and token."""

from __future__ import annotations

import base64
import binascii
import os
import ssl
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from exporter.config.schema import KueueConfig
from exporter.credentials import check_secret, read_secret_file
from exporter.errors import ConfigError, ConfigIssue, UpstreamCredentialError
from exporter.files import check_regular_file, read_regular_file
from exporter.redact import register
from exporter.sources.clients import make_client

__all__ = ["SERVICE_ACCOUNT_DIR", "build_client"]

SOURCE = "kueue"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
MAX_KUBECONFIG_BYTES = 1 << 20


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
    auth: _Bearer | None = None
    ca_file: str | None = None
    ca_data: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False


def build_client(
    cfg: KueueConfig,
    transport: httpx.BaseTransport | None = None,
    *,
    service_account_dir: str = SERVICE_ACCOUNT_DIR,
) -> httpx.Client:
    """A client for the API server: in-cluster, from a kubeconfig, or an explicit url."""
    if cfg.in_cluster:
        endpoint = _in_cluster(service_account_dir)
    elif cfg.kubeconfig is not None:
        endpoint = _from_kubeconfig(cfg.kubeconfig)
    else:
        endpoint = _Endpoint(
            str(cfg.url),
            _Bearer(token_file=cfg.token_file) if cfg.token_file else None,
            ca_file=cfg.ca_file,
        )
    if endpoint.auth is not None:
        endpoint.auth.current()  # a bad token is a config error at start, not a failed refresh
    verify: ssl.SSLContext | bool = True
    if transport is None and endpoint.server.startswith("https://"):
        verify = _tls(endpoint, cfg.insecure_skip_tls_verify)
    client = make_client(endpoint.server, cfg.timeout, verify=verify, transport=transport)
    if endpoint.auth is not None:
        client.auth = endpoint.auth
    return client


def _in_cluster(sa_dir: str) -> _Endpoint:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        issue = ConfigIssue(None, "sources.kueue.in_cluster", "KUBERNETES_SERVICE_HOST is unset")
        raise ConfigError(sa_dir, [issue])
    host = f"[{host}]" if ":" in host else host  # an IPv6 service address
    return _Endpoint(
        f"https://{host}:{port}",
        _Bearer(token_file=os.path.join(sa_dir, "token")),
        ca_file=os.path.join(sa_dir, "ca.crt"),
    )


def _from_kubeconfig(path: str) -> _Endpoint:
    def bad(key: str, message: str) -> ConfigError:
        return ConfigError(path, [ConfigIssue(None, key, message)])

    try:
        data = yaml.safe_load(read_regular_file(path, MAX_KUBECONFIG_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise bad("", f"cannot read kubeconfig: {exc}") from None
    if not isinstance(data, dict):
        raise bad("", "not a kubeconfig")
    context = _named(data, "contexts", "context", str(data.get("current-context", "")), bad)
    cluster = _named(data, "clusters", "cluster", str(context.get("cluster", "")), bad)
    user = (
        _named(data, "users", "user", str(context.get("user", "")), bad)
        if context.get("user")
        else {}
    )
    unsupported = {"exec", "auth-provider", "client-certificate-data", "client-key-data"} & set(
        user
    )
    if unsupported:
        raise bad("users.user", f"{', '.join(sorted(unsupported))}: not supported; use a token")
    base = Path(path).parent

    def rel(value: Any) -> str | None:
        return str(base / str(value)) if value else None

    try:
        return _Endpoint(
            str(cluster.get("server", "")).rstrip("/"),
            _user_auth(user, rel),
            ca_file=rel(cluster.get("certificate-authority")),
            ca_data=_b64(cluster.get("certificate-authority-data")).decode() or None,
            cert_file=rel(user.get("client-certificate")),
            key_file=rel(user.get("client-key")),
            insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        )
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise bad("clusters/users", f"bad base64 data: {exc}") from None


def _named(
    data: Mapping[str, Any],
    section: str,
    kind: str,
    name: str,
    bad: Callable[[str, str], ConfigError],
) -> dict[str, Any]:
    for entry in data.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            inner = entry.get(kind)
            if isinstance(inner, dict):
                return inner
    raise bad(section, f"no {kind} named {name!r}")


def _user_auth(user: Mapping[str, Any], rel: Callable[[Any], str | None]) -> _Bearer | None:
    if user.get("token"):
        return _Bearer(token=check_secret(str(user["token"]), "the kubeconfig user's token"))
    if user.get("tokenFile"):
        return _Bearer(token_file=rel(user["tokenFile"]))
    return None


def _b64(value: Any) -> bytes:
    return base64.b64decode(str(value), validate=True) if value else b""


def _tls(endpoint: _Endpoint, insecure: bool) -> ssl.SSLContext | bool:
    if insecure or endpoint.insecure:
        return False
    try:
        for file in (endpoint.ca_file, endpoint.cert_file, endpoint.key_file):
            if file is not None:
                check_regular_file(file)  # ssl would wait forever on a FIFO
        context = ssl.create_default_context(cafile=endpoint.ca_file, cadata=endpoint.ca_data)
        if endpoint.cert_file and endpoint.key_file:
            context.load_cert_chain(endpoint.cert_file, endpoint.key_file)
    except OSError as exc:  # ssl.SSLError included
        issue = ConfigIssue(None, "sources.kueue", f"cannot load TLS files: {exc}")
        raise ConfigError(endpoint.ca_file or endpoint.server, [issue]) from None
    return context


# --- fetching -----------------------------------------------------------------------------
