"""Upstream answers as raw bytes, played to a client without a socket: the same script can be
read by the light client (as its Connection) and by httpx (as httpcore's network stream), so
the two clients can be held to the same outcome."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore

__all__ = ["Script", "ScriptedBackend", "ScriptedOpener", "ScriptedStream"]

# A recv's answer: bytes, or an exception it raises; after the script, the end of the stream.
Step = bytes | BaseException


@dataclass
class Script:
    """What one connection answers, recv by recv, and what happens on each recv."""

    steps: list[Step]
    stale: bool = False  # what an idle check of the kept connection finds
    on_recv: Callable[[], None] = lambda: None  # e.g. a stopwatch moving as bytes come
    send_error: BaseException | None = None


@dataclass
class ScriptedStream:
    """The light client's Connection over a script: records what was sent and each timeout."""

    script: Script
    sent: list[bytes] = field(default_factory=list)
    timeouts: list[float | None] = field(default_factory=list)
    closed: bool = False

    def send(self, data: bytes, timeout: float | None) -> None:
        self.timeouts.append(timeout)
        if self.script.send_error is not None:
            raise self.script.send_error
        self.sent.append(data)

    def recv(self, timeout: float | None) -> bytes:
        self.timeouts.append(timeout)
        self.script.on_recv()
        if not self.script.steps:
            return b""
        step = self.script.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step

    def stale(self) -> bool:
        return self.script.stale

    def close(self) -> None:
        self.closed = True


@dataclass
class ScriptedOpener:
    """Opens one scripted connection per connect, in order; records where each went."""

    scripts: list[Script | BaseException]
    opened: list[tuple[str, int, bool]] = field(default_factory=list)
    streams: list[ScriptedStream] = field(default_factory=list)
    connect_waits: list[float | None] = field(default_factory=list)

    def __call__(
        self, host: str, port: int, tls: ssl.SSLContext | None, wait: Callable[[], float | None]
    ) -> ScriptedStream:
        self.opened.append((host, port, tls is not None))
        self.connect_waits.append(wait())
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        stream = ScriptedStream(script)
        self.streams.append(stream)
        return stream


class _CoreStream(httpcore.NetworkStream):
    """httpcore's view of a script: reads cut to what it asks for at most."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._pending = b""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        del timeout
        if not self._pending:
            self._script.on_recv()
            if not self._script.steps:
                return b""
            step = self._script.steps.pop(0)
            if isinstance(step, BaseException):
                raise httpcore.ReadError(str(step)) from step
            self._pending = step
        piece, self._pending = self._pending[:max_bytes], self._pending[max_bytes:]
        return piece

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        del buffer, timeout
        if self._script.send_error is not None:
            raise httpcore.WriteError(str(self._script.send_error))

    def close(self) -> None:
        pass

    def get_extra_info(self, info: str) -> Any:
        return self._script.stale if info == "is_readable" else None


class ScriptedBackend(httpcore.NetworkBackend):
    """httpcore's network backend over scripts, one per connect."""

    def __init__(self, scripts: Iterable[Script]) -> None:
        self._scripts = list(scripts)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        del host, port, timeout, local_address, socket_options
        return _CoreStream(self._scripts.pop(0))

    def sleep(self, seconds: float) -> None:
        del seconds
