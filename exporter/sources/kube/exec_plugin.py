"""Exec credential plugins (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`): run
under a deadline, their output bounded and checked, the credential kept until it expires.

What a plugin prints is a secret and what it says on stderr may quote one: neither is logged
nor put in an error. A failing plugin's error names the kubeconfig user and the command.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from exporter.clock import Clock
from exporter.credentials import check_secret
from exporter.errors import UpstreamCredentialError
from exporter.redact import register
from exporter.sources import deadline
from exporter.sources.kube.kubeconfig import ExecSpec

__all__ = ["MAX_OUTPUT_BYTES", "Credential", "ExecAuth", "PluginFailed", "run_plugin"]

# An ExecCredential is a token or a certificate pair: a few kilobytes. More is not one.
MAX_OUTPUT_BYTES = 1 << 20
_SOURCE = "kueue"


@dataclass(frozen=True)
class Credential:
    """What a plugin returned: a bearer token, or a client certificate and key (PEM)."""

    token: str | None
    cert: bytes | None
    key: bytes | None
    expires: datetime | None

    def __repr__(self) -> str:
        return f"Credential(<redacted>, expires={self.expires})"


class PluginFailed(UpstreamCredentialError):
    """The plugin could not give a credential; the source is down for this refresh."""


def run_plugin(spec: ExecSpec, seconds: float) -> Credential:
    """Run the plugin once, for at most `seconds`, and return the credential it printed."""
    return _parse(spec, _output(spec, seconds))


def _fail(spec: ExecSpec, what: str) -> PluginFailed:
    # The user and the command, never the output, the arguments or the environment.
    return PluginFailed(
        f"{_SOURCE}: exec plugin of kubeconfig user {spec.user!r} "
        f"({os.path.basename(spec.command)}) {what}"
    )


def _exec_info(spec: ExecSpec) -> str:
    # KUBERNETES_EXEC_INFO as client-go sets it; never interactive: the exporter has no terminal.
    body: dict[str, Any] = {"interactive": False}
    if spec.cluster is not None:
        body["cluster"] = dict(spec.cluster)
    return json.dumps({"apiVersion": spec.api_version, "kind": "ExecCredential", "spec": body})


def _output(spec: ExecSpec, seconds: float) -> bytes:
    if seconds <= 0:
        raise _fail(spec, "was not run: the refresh has no time left")
    env = {**os.environ, **dict(spec.env), "KUBERNETES_EXEC_INFO": _exec_info(spec)}
    try:
        # A session of its own, so a plugin's children (aws runs python) end with it.
        process = subprocess.Popen(
            [spec.command, *spec.args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise _fail(spec, f"could not start: {exc.strerror}") from None
    try:
        out = _read(spec, process, time.monotonic() + seconds, seconds)
    finally:
        _end(process)
    if process.returncode != 0:
        raise _fail(spec, f"exited with status {process.returncode}")
    return out


def _read(spec: ExecSpec, process: subprocess.Popen[bytes], until: float, seconds: float) -> bytes:
    assert process.stdout is not None
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = until - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise _fail(spec, f"did not finish within {seconds:.3g} s")
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                raise _fail(spec, f"printed more than {MAX_OUTPUT_BYTES // 1024} KiB")
            chunks.append(chunk)
    try:
        process.wait(max(0.0, until - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise _fail(spec, f"did not finish within {seconds:.3g} s") from None
    return b"".join(chunks)


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # it ended just now
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _parse(spec: ExecSpec, out: bytes) -> Credential:
    try:
        body = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _fail(spec, "printed something that is not an ExecCredential (not JSON)") from None
    if not isinstance(body, dict) or body.get("kind") != "ExecCredential":
        raise _fail(spec, "printed JSON that is not an ExecCredential (kind)")
    if body.get("apiVersion") != spec.api_version:
        raise _fail(spec, f"answered in another apiVersion than {spec.api_version}")
    status = body.get("status")
    if not isinstance(status, dict):
        raise _fail(spec, "printed an ExecCredential without a status")
    token = _token(spec, status.get("token"))
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    if (cert is None) != (key is None) or not all(isinstance(v, str | None) for v in (cert, key)):
        raise _fail(spec, "printed clientCertificateData and clientKeyData not as a pair")
    if token is None and cert is None:
        raise _fail(spec, "printed neither status.token nor a client certificate")
    return Credential(
        token,
        cert.encode() if cert else None,
        key.encode() if key else None,
        _expiry(spec, status.get("expirationTimestamp")),
    )


def _token(spec: ExecSpec, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _fail(spec, "printed a status.token that is not a string")
    try:
        token = check_secret(value, "status.token")
        register(f"{_SOURCE} exec token", token)
    except ValueError as exc:
        raise _fail(spec, f"printed an unusable token: {exc}") from None
    return token


def _expiry(spec: ExecSpec, value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise _fail(spec, "printed a status.expirationTimestamp that is not RFC 3339")
    return when


class ExecAuth(httpx.Auth):
    """Bearer auth from a plugin: its credential kept until `expirationTimestamp` (or, without
    one, until the API server answers 401), as client-go keeps it."""

    def __init__(
        self,
        spec: ExecSpec,
        timeout: float,
        clock: Clock,
        on_certificate: Callable[[bytes, bytes], None] | None = None,
        run: Callable[[ExecSpec, float], Credential] = run_plugin,
    ) -> None:
        self._spec = spec
        self._run = run
        self._timeout = timeout
        self._clock = clock
        self._on_certificate = on_certificate
        self._lock = threading.Lock()
        self._kept: Credential | None = None

    def __repr__(self) -> str:
        return f"ExecAuth({self._spec.user!r})"

    def credential(self) -> Credential:
        """The kept credential while it is valid, else a new one from the plugin."""
        with self._lock:
            kept = self._kept
            if kept is not None and (kept.expires is None or self._clock() < kept.expires):
                return kept
            self._kept = None
            # The call's timeout, within what is left of the refresh.
            seconds = min(self._timeout, deadline.current().remaining())
            fresh = self._run(self._spec, seconds)
            if fresh.cert is not None and fresh.key is not None and self._on_certificate:
                self._on_certificate(fresh.cert, fresh.key)
            self._kept = fresh
            return fresh

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Attach the token; a 401 drops the kept credential so the next call asks again."""
        used = self.credential()
        if used.token is not None:
            request.headers["Authorization"] = f"Bearer {used.token}"
        response = yield request
        if response.status_code == 401:
            with self._lock:
                if self._kept is used:
                    self._kept = None
