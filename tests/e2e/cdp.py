"""A headless Chromium driven over the Chrome DevTools Protocol (websocket-client), for page tests.

Chromium picks its own debugging port (`--remote-debugging-port=0`) and writes it to
`DevToolsActivePort` in its profile. The browser resolves no host name, so a page that tried
to load anything from a network would fail, and the test sees the attempt in its events.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import websocket

__all__ = ["Browser", "Page", "chromium_path", "headless_chromium"]

START_TIMEOUT = 60.0  # a loaded 2-core machine starts Chromium slowly
CALL_TIMEOUT = 60.0
FLAGS = (
    "--headless",
    "--no-sandbox",  # the tests run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-sync",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--no-pings",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


def chromium_path() -> str | None:
    """Debian's `chromium`, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One tab: commands in order, with every event it sent kept for the test to inspect."""

    def __init__(self, url: str) -> None:
        self._ws = websocket.create_connection(url, timeout=CALL_TIMEOUT, suppress_origin=True)
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its answer; events that arrive meanwhile are kept."""
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == self._next:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        """The first event of that name (already received or the next ones)."""
        deadline = time.monotonic() + CALL_TIMEOUT
        while True:
            for message in self.events:
                if message.get("method") == event:
                    return message
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {event} within {CALL_TIMEOUT:g}s")
            self.events.append(json.loads(self._ws.recv()))

    def named(self, *events: str) -> list[dict[str, Any]]:
        """The params of every kept event of those names."""
        return [m["params"] for m in self.events if m.get("method") in events]

    def open(
        self, url: str, width: int = 1280, height: int = 900, *, bypass_csp: bool = False
    ) -> None:
        """Load `url` at that viewport size with the domains the tests read enabled.

        `bypass_csp` lets a test inject its own script (axe-core) into a page whose
        Content-Security-Policy forbids scripts.
        """
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        if bypass_csp:
            self.call("Page.setBypassCSP", enabled=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        answer = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"evaluate: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def evaluate_async(self, expression: str) -> Any:
        """The value a JavaScript expression's promise resolves to."""
        answer = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"evaluate: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page, not only the viewport, as PNG."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def print_media(self, width: int) -> None:
        """Lay the page out as it prints: the print style sheet, on paper `width` CSS px wide."""
        self.call("Emulation.setEmulatedMedia", media="print")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )

    def pdf(self) -> bytes:
        """The page printed to PDF on the paper its style sheet's `@page` asks for."""
        printed = self.call("Page.printToPDF", preferCSSPageSize=True, printBackground=True)
        return base64.b64decode(printed["data"])

    def close(self) -> None:
        """Close the connection to the tab."""
        self._ws.close()


class Browser:
    """A running headless Chromium and its DevTools endpoint."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    @contextmanager
    def page(self) -> Iterator[Page]:
        """A new blank tab, closed afterwards."""
        target = httpx.put(f"{self.endpoint}/json/new?about:blank", timeout=CALL_TIMEOUT).json()
        page = Page(target["webSocketDebuggerUrl"])
        try:
            yield page
        finally:
            page.close()
            httpx.get(f"{self.endpoint}/json/close/{target['id']}", timeout=CALL_TIMEOUT)


def _port(profile: Path, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    active = profile / "DevToolsActivePort"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with status {process.returncode}")
        if active.exists() and (lines := active.read_text().splitlines()):
            return int(lines[0])
        time.sleep(0.1)
    raise TimeoutError(f"chromium did not open its DevTools port within {START_TIMEOUT:g}s")


@contextmanager
def headless_chromium(binary: str, profile: Path) -> Iterator[Browser]:
    """Start Chromium with a fresh profile; stop it (and only it) afterwards."""
    process = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Its own process group, so stopping it stops its renderers too, and nothing else.
        start_new_session=True,
    )
    try:
        yield Browser(f"http://127.0.0.1:{_port(profile, process)}")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
