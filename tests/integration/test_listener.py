"""The serving process under idle, trickling and failing clients: scrapes are still answered.

With 64 idle and 16 trickling connections open, or 2,000 idle ones, a scrape is answered while
they are still open (not once the request deadline has cleared them), and while 400 wrong
passwords (bcrypt cost 10) arrive 64 at a time from a process of its own, scrapes with the
right one are answered while the flood still runs. (The bench floods with 1,000: here the
flood only has to outlast many scrapes, and 64 at once overfill the queue of bcrypt checks
as much whatever the total.) How fast is measured by
`python -m bench.listener`, never asserted: a busy machine moves those figures. That an
unknown user costs what a wrong password does is checked on the decoy hash itself
(tests/unit/config/test_basic_auth.py).
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import httpx
import pytest

from chargeback_demo.stack import DemoStack
from tests.integration.process import Exporter, until

PASSWORD = "scrape-me"
# A client's limit against a hang, never a judgement of speed (bench/listener.py measures that).
HANG_GUARD = 30.0
FLOOD_SIZE = 400
FLOOD = (sys.executable, "-m", "chargeback_demo.flood")  # PORT TOTAL AT_ONCE AUTH


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _start(stack: DemoStack, tmp_path: Path, web: str = "", *flags: str) -> Exporter:
    config = tmp_path / "config.yaml"
    url = stack.urls["opencost"]
    config.write_text(f'sources:\n  opencost: {{url: "{url}", interval: 5m}}\n', encoding="utf-8")
    args: list[str] = []
    if web:
        (tmp_path / "web.yml").write_text(web, encoding="utf-8")
        args = ["--web.config.file", str(tmp_path / "web.yml")]
    return Exporter(config, tmp_path / "exporter.log", [*args, *flags])


@pytest.fixture
def plain(stack: DemoStack, tmp_path: Path) -> Iterator[Exporter]:
    child = _start(stack, tmp_path)
    try:
        until("the first exposition", lambda: "chargeback_source_up" in child.metrics())
        yield child
    finally:
        child.stop()


def _scrape(url: str) -> None:
    """One scrape, answered in full; the client's timeout only guards against a hang."""
    response = httpx.get(url, timeout=HANG_GUARD)
    assert response.status_code == 200
    assert b"chargeback_source_up" in response.content


def _still_open(sock: socket.socket) -> bool:
    """Whether the server has left the connection open (nothing to read, no end of stream)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def test_idle_and_trickling_connections_do_not_stall_a_scrape(plain: Exporter) -> None:
    idle = [socket.create_connection(("127.0.0.1", plain.port)) for _ in range(64)]
    trickling = [socket.create_connection(("127.0.0.1", plain.port)) for _ in range(16)]
    stop = threading.Event()

    def trickle() -> None:
        # A byte a second from each: every read is in time, the request never completes.
        for byte in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" * 10:
            for sock in trickling:
                with contextlib.suppress(OSError):
                    sock.send(bytes([byte]))
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        time.sleep(1.5)  # every connection is open and the trickle has begun
        for _ in range(5):
            _scrape(plain.url)
        # Answered beside them: a server that answered only once its request deadline had
        # cut the idle and trickling connections would have closed them by now.
        still_open = sum(_still_open(sock) for sock in idle + trickling)
    finally:
        stop.set()
        for sock in idle + trickling:
            sock.close()
    assert still_open == len(idle + trickling)


def test_thousands_of_idle_connections_do_not_keep_a_scrape_out(plain: Exporter) -> None:
    idle = [socket.create_connection(("127.0.0.1", plain.port)) for _ in range(2000)]
    try:
        for _ in range(5):
            _scrape(plain.url)
        # Past the connection cap the oldest idle ones make room; the newest are still open,
        # so the scrapes did not wait for the request deadline to clear them all.
        newest_open = _still_open(idle[-1])
    finally:
        for sock in idle:
            sock.close()
    assert newest_open


@pytest.fixture
def guarded(stack: DemoStack, tmp_path: Path) -> Iterator[Exporter]:
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()
    child = _start(stack, tmp_path, f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    try:
        until("the first exposition", lambda: _answers(child, ("prometheus", PASSWORD)))
        yield child
    finally:
        child.stop()


def _answers(child: Exporter, auth: tuple[str, str]) -> bool:
    try:
        return httpx.get(child.url, auth=auth, timeout=30).status_code == 200
    except httpx.TransportError:
        return False


def test_a_flood_of_wrong_passwords_does_not_starve_scrapes(guarded: Exporter) -> None:
    wrong = _basic("prometheus", "no")
    flood = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chargeback_demo.flood",
            str(guarded.port),
            str(FLOOD_SIZE),
            "64",
            wrong,
        ],
        stdout=subprocess.PIPE,
    )
    # Open loop: a scrape starts every 50 ms whatever the earlier ones are doing. Each notes
    # its status and whether the flood was still running when its answer came.
    answers: list[tuple[int, bool]] = []
    scrapes: list[threading.Thread] = []
    client = httpx.Client(auth=("prometheus", PASSWORD), timeout=HANG_GUARD)

    def scrape() -> None:
        status = client.get(guarded.url).status_code
        answers.append((status, flood.poll() is None))

    with client:
        while flood.poll() is None:
            scrapes.append(threading.Thread(target=scrape, daemon=True))
            scrapes[-1].start()
            time.sleep(0.05)
        for thread in scrapes:
            thread.join(HANG_GUARD)
    out, _ = flood.communicate()
    statuses = json.loads(out)["statuses"]
    during = sum(in_flood for _, in_flood in answers)
    print(f"{len(answers)} scrapes during the flood ({statuses}), {during} answered within it")
    assert set(statuses) <= {"401", "429"} and sum(statuses.values()) == FLOOD_SIZE
    assert len(scrapes) >= 5, "the flood lasted long enough to overlap scrapes"
    assert [status for status, _ in answers] == [200] * len(scrapes), "every scrape answers 200"
    # Starved scrapes would wait behind the bcrypt checks and be answered once the flood ends.
    assert during * 2 >= len(scrapes), "most scrapes are answered while the flood still runs"


def test_health_without_auth_when_asked(
    guarded: Exporter, stack: DemoStack, tmp_path: Path
) -> None:
    # Without the flag (guarded), health asks for credentials like every path.
    assert guarded.get("/healthz")[0] == 401
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()
    web = f"basic_auth_users:\n  prometheus: '{hashed}'\n"
    (tmp_path / "open").mkdir()
    child = _start(stack, tmp_path / "open", web, "--web.healthz-without-auth")
    try:
        until("health without credentials", lambda: child.get("/healthz")[0] == 200)
        for path in ("/metrics", "/", "/statement"):
            assert child.get(path)[0] == 401, path
        assert _answers(child, ("prometheus", PASSWORD))
    finally:
        child.stop()


def test_serves_on_an_ipv6_listen_address(stack: DemoStack, tmp_path: Path) -> None:
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    config = tmp_path / "config.yaml"
    config.write_text("currency: EUR\n", encoding="utf-8")
    child = Exporter(config, tmp_path / "exporter.log", host="::1")
    try:
        until("metrics on [::1]", lambda: 'currency="EUR"' in child.metrics())
    finally:
        child.stop()
