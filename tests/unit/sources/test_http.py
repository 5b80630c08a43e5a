"""The HTTP boundary: per-call and per-refresh deadlines, retries with backoff, redacted bodies."""

from __future__ import annotations

import base64
import contextlib
import random
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, text_response
from exporter import redact
from exporter.config.schema import Config, SourceConfig
from exporter.errors import UpstreamError, UpstreamPayloadError, UpstreamStatusError
from exporter.serve.wiring import build_sources, make_refresher
from exporter.sources.deadline import Backoff, RetryPolicy, refresh_budget, retry_after
from exporter.sources.http import get_json, get_text, make_client
from tests.conftest import CLOCK, FIXED_NOW

TOKEN = "tok-3b9e1c5d77a0"


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    yield
    for name in ("http://upstream authorization", "http://upstream authorization credential"):
        redact.forget(name)


# --- a real loopback server that drips its answer -------------------------------------------


class Dripper:
    """Answers every request one byte at a time, `every` seconds apart, in headers or body."""

    def __init__(
        self, phase: str, every: float = 0.05, size: int = 400, tls: ssl.SSLContext | None = None
    ) -> None:
        self.phase, self.every, self.size, self._tls = phase, every, size, tls
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        scheme, host = ("https", "localhost") if tls else ("http", "127.0.0.1")
        self.url = f"{scheme}://{host}:{self._sock.getsockname()[1]}"
        self.head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"X-Padding: {'p' * 200}\r\nContent-Length: {size}\r\n\r\n"
        ).encode()
        self.sent = 0  # bytes of this phase written before the client hung up

    def __enter__(self) -> Dripper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._sock.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, raw: socket.socket) -> None:
        with raw:
            try:
                conn = self._tls.wrap_socket(raw, server_side=True) if self._tls else raw
            except OSError:
                return
            with conn:
                self._drip(conn)

    def _drip(self, conn: socket.socket) -> None:
        body = b"[" + b" " * (self.size - 2) + b"]"
        dripped = self.head if self.phase == "headers" else body
        try:
            conn.recv(65536)
            if self.phase == "body":
                conn.sendall(self.head)
            for byte in dripped:
                if self._stop.wait(self.every):
                    return
                conn.sendall(bytes([byte]))
                self.sent += 1
        except OSError:
            return  # the client hung up at its deadline


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_an_upstream_that_drips_is_cut_at_the_call_deadline(phase: str) -> None:
    # Every byte comes well within the read timeout, so only an overall deadline can stop it.
    with (
        Dripper(phase) as server,
        make_client(server.url, timedelta(seconds=0.5)) as client,
        pytest.raises(UpstreamError) as caught,
    ):
        get_json(client, "opencost", "/allocation")
    assert caught.value.reason == "timeout"
    assert str(caught.value) == "opencost: GET /allocation passed its call deadline of 0.5s"
    # Cut in the phase that dripped, long before it would have ended.
    assert server.sent < (len(server.head) if phase == "headers" else server.size) // 2


def test_a_dripping_source_is_down_with_reason_timeout() -> None:
    with Dripper("body") as server:
        config = Config.model_validate(
            {"sources": {"dcgm": {"urls": [f"{server.url}/metrics"], "timeout": "0.3s"}}}
        )
        refresher = make_refresher(config, clock=CLOCK)
        assert not refresher.refresh_all()
        text = refresher.exposition.text.decode()
        refresher.stop()
    assert 'chargeback_source_up{source="dcgm"} 0.0' in text
    assert 'chargeback_source_errors_total{reason="timeout",source="dcgm"} 1.0' in text


# --- the refresh deadline, on a stopwatch the test moves -------------------------------------


class Stopwatch:
    """A monotonic clock that moves only when told to; sleeping moves it too."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Highest(random.Random):
    """Jitter that always draws the top of its range, so the bound itself is visible."""

    def uniform(self, a: float, b: float) -> float:
        return b


def policy(watch: Stopwatch, attempts: int = 3, cap: float = 8.0) -> RetryPolicy:
    backoff = Backoff(attempts=attempts, cap=cap, rng=Highest(), sleep=watch.sleep)
    return RetryPolicy(backoff=backoff, monotonic=watch, clock=CLOCK)


DCGM_TEXT = (Path(__file__).parents[2] / "fixtures" / "dcgm" / "mig_and_idle.txt").read_text()


def test_a_refresh_past_its_deadline_is_a_timeout_even_when_each_call_is_quick() -> None:
    watch = Stopwatch()

    def slow(request: FakeRequest) -> FakeResponse:
        watch.now += 1.0  # each scrape takes a second of the refresh's 2.5
        return text_response(200, DCGM_TEXT)

    server = FakeServer(slow).start()
    try:
        urls = [f"{server.url}/node-{n}/metrics" for n in range(4)]
        # One call at a time, so each starts with what the calls before it left of the budget.
        dcgm = {"urls": urls, "timeout": "1s", "refresh_timeout": "2.5s", "concurrency": 1}
        config = Config.model_validate({"sources": {"dcgm": dcgm}})
        (source,) = build_sources(config, policy=policy(watch))
        with pytest.raises(UpstreamError) as caught:
            source.fetch(FIXED_NOW)
    finally:
        server.stop()
    assert caught.value.reason == "timeout"
    assert "refresh deadline of 2.5s" in str(caught.value)


def test_a_call_after_the_refresh_deadline_is_not_made() -> None:
    watch = Stopwatch()
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, json=[])

    with _client(handler) as client, refresh_budget(policy(watch).start(5)):
        get_json(client, "litellm", "/team/list")
        watch.now += 6
        with pytest.raises(UpstreamError) as caught:
            get_json(client, "litellm", "/team/daily/activity")
    assert seen == ["/team/list"]
    assert caught.value.reason == "timeout" and "before GET /team/daily/activity" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("timeout", "interval", "expected"),
    [("30s", "5m", 90.0), ("30s", "1m", 60.0), ("30s", "10s", 30.0)],
)
def test_the_default_refresh_deadline_is_three_calls_within_the_interval(
    timeout: str, interval: str, expected: float
) -> None:
    cfg = SourceConfig.model_validate({"timeout": timeout, "interval": interval})
    assert cfg.refresh_deadline.total_seconds() == expected


def test_a_refresh_timeout_shorter_than_a_call_is_refused() -> None:
    with pytest.raises(ValueError, match="must be at least timeout"):
        SourceConfig.model_validate({"timeout": "30s", "refresh_timeout": "10s"})


# --- retries ---------------------------------------------------------------------------------


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.Client:
    return make_client(
        "http://upstream",
        timedelta(seconds=10),
        headers={"Authorization": f"Bearer {TOKEN}"},
        transport=httpx.MockTransport(handler),
    )


def _answers(
    *responses: httpx.Response | Exception,
) -> tuple[Callable[[httpx.Request], httpx.Response], list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = responses[min(len(seen), len(responses)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handler, seen


def test_retry_after_seconds_is_honoured_on_429() -> None:
    watch = Stopwatch()
    handler, seen = _answers(
        httpx.Response(429, headers={"Retry-After": "3"}, json={"detail": "slow down"}),
        httpx.Response(200, json={"data": [{"team_id": "t-1"}]}),
    )
    with _client(handler) as client, refresh_budget(policy(watch).start(60)):
        body = get_json(client, "litellm", "/team/list", {"page": "1"})
    assert body == {"data": [{"team_id": "t-1"}]}
    assert watch.sleeps == [3.0] and len(seen) == 2
    assert all(r.method == "GET" and r.url.params["page"] == "1" for r in seen)


def test_retry_after_http_date_is_measured_against_the_upstreams_date() -> None:
    watch = Stopwatch()
    server_now = FIXED_NOW - timedelta(hours=2)  # the upstream's clock is off; its wait is not
    headers = {
        "Date": format_datetime(server_now, usegmt=True),
        "Retry-After": format_datetime(server_now + timedelta(seconds=7), usegmt=True),
    }
    handler, _ = _answers(httpx.Response(503, headers=headers), httpx.Response(200, text="ok"))
    with _client(handler) as client, refresh_budget(policy(watch).start(60)):
        assert get_text(client, "dcgm", "/metrics") == "ok"
    assert watch.sleeps == [7.0]


def test_retry_after_parsing() -> None:
    later = format_datetime(FIXED_NOW + timedelta(seconds=4), usegmt=True)
    assert retry_after({"retry-after": later}, CLOCK) == 4.0  # no Date: the clock's now
    assert retry_after({"retry-after": "120"}, CLOCK) == 120.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, CLOCK) == 0.0
    assert retry_after({"retry-after": "soon"}, CLOCK) is None
    assert retry_after({}, CLOCK) is None


def test_backoff_doubles_up_to_its_cap_then_gives_up() -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.Response(502, text="<html>Bad Gateway</html>"))
    with (
        _client(handler) as client,
        refresh_budget(policy(watch, 5, cap=1.5).start(60)),
        pytest.raises(UpstreamStatusError) as caught,
    ):
        get_json(client, "opencost", "/allocation")
    assert watch.sleeps == [0.5, 1.0, 1.5, 1.5]
    assert len(seen) == 5 and caught.value.reason == "http_5xx"


def test_jitter_is_drawn_from_the_injected_random_source() -> None:
    def run(seed: int) -> list[float]:
        watch = Stopwatch()
        backoff = Backoff(attempts=4, rng=random.Random(seed), sleep=watch.sleep)
        handler, _ = _answers(httpx.Response(504))
        budget = RetryPolicy(backoff=backoff, monotonic=watch).start(60)
        with _client(handler) as client, refresh_budget(budget), pytest.raises(UpstreamError):
            get_text(client, "dcgm", "/metrics")
        return watch.sleeps

    first = run(7)
    assert first == run(7) and first != run(8)
    assert [0 <= wait <= 0.5 * 2**n for n, wait in enumerate(first)] == [True] * 3


def test_no_wait_runs_past_the_refresh_deadline() -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.Response(503))
    with (
        _client(handler) as client,
        refresh_budget(policy(watch, 10).start(2.0)),
        pytest.raises(UpstreamStatusError),
    ):
        get_text(client, "dcgm", "/metrics")
    assert watch.sleeps == [0.5, 1.0]  # the next 2s wait would end past the deadline
    assert len(seen) == 3


def test_a_retry_after_beyond_the_deadline_fails_at_once() -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.Response(429, headers={"Retry-After": "600"}))
    with (
        _client(handler) as client,
        refresh_budget(policy(watch).start(30)),
        pytest.raises(UpstreamStatusError) as caught,
    ):
        get_json(client, "litellm", "/team/list")
    assert watch.sleeps == [] and len(seen) == 1 and caught.value.status == 429


def test_a_refused_connection_is_retried() -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.ConnectError("refused"), httpx.Response(200, json={}))
    with _client(handler) as client, refresh_budget(policy(watch).start(60)):
        assert get_json(client, "kueue", "/apis") == {}
    assert watch.sleeps == [0.5] and len(seen) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_other_failures_are_not_retried(status: int) -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.Response(status, json={"message": "no"}))
    with (
        _client(handler) as client,
        refresh_budget(policy(watch).start(60)),
        pytest.raises(UpstreamStatusError),
    ):
        get_json(client, "kueue", "/apis")
    assert watch.sleeps == [] and len(seen) == 1


def test_outside_a_refresh_nothing_is_retried() -> None:
    handler, seen = _answers(httpx.Response(503))
    with _client(handler) as client, pytest.raises(UpstreamStatusError):
        get_text(client, "dcgm", "/metrics")
    assert len(seen) == 1


# --- bodies and errors carry no secret -------------------------------------------------------

FORMS = [
    TOKEN,
    quote(TOKEN, safe=""),
    base64.b64encode(TOKEN.encode()).decode(),
]


@pytest.mark.parametrize("form", FORMS)
def test_an_error_body_echoing_the_token_is_redacted(form: str) -> None:
    body = {"kind": "Status", "message": f"etcd: request with token {form} timed out", "code": 500}
    handler, _ = _answers(httpx.Response(500, json=body))
    with _client(handler) as client, pytest.raises(UpstreamStatusError) as caught:
        get_json(client, "kueue", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues")
    assert form not in str(caught.value) and "<redacted>" in str(caught.value)


def test_a_malformed_body_is_quoted_short_and_redacted() -> None:
    body = f"<html><body>proxy error, key {TOKEN} {'x' * 500}</body></html>"
    handler, _ = _answers(httpx.Response(200, text=body))
    with _client(handler) as client, pytest.raises(UpstreamPayloadError) as caught:
        get_json(client, "litellm", "/team/list")
    message = str(caught.value)
    assert TOKEN not in message and "<redacted>" in message
    assert len(message) < 120 and message.endswith("...'")


def test_a_decoded_body_never_carries_the_token() -> None:
    handler, _ = _answers(httpx.Response(200, json={"teams": [{"note": f"key {TOKEN}"}]}))
    with _client(handler) as client:
        assert get_json(client, "litellm", "/team/list") == {"teams": [{"note": "key <redacted>"}]}
