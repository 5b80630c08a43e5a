"""The HTTP boundary: per-refresh deadlines, retries with backoff, redacted bodies."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable, Iterator
from datetime import timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from exporter import redact
from exporter.config.schema import SourceConfig
from exporter.errors import UpstreamError, UpstreamPayloadError, UpstreamStatusError
from exporter.sources.clients import make_client
from exporter.sources.deadline import Backoff, RetryPolicy, refresh_deadline, retry_after
from exporter.sources.http import get_json, get_text
from tests.conftest import CLOCK, FIXED_NOW

TOKEN = "tok-3b9e1c5d77a0-fe42"


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    yield
    for name in ("http://upstream authorization", "http://upstream authorization credential"):
        redact.forget(name)


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


def test_a_call_after_the_refresh_deadline_is_not_made() -> None:
    watch = Stopwatch()
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, json=[])

    with _client(handler) as client, refresh_deadline(policy(watch).start(5)):
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
    with _client(handler) as client, refresh_deadline(policy(watch).start(60)):
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
    with _client(handler) as client, refresh_deadline(policy(watch).start(60)):
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
        refresh_deadline(policy(watch, 5, cap=1.5).start(60)),
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
        with _client(handler) as client, refresh_deadline(budget), pytest.raises(UpstreamError):
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
        refresh_deadline(policy(watch, 10).start(2.0)),
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
        refresh_deadline(policy(watch).start(30)),
        pytest.raises(UpstreamStatusError) as caught,
    ):
        get_json(client, "litellm", "/team/list")
    assert watch.sleeps == [] and len(seen) == 1 and caught.value.status == 429


def test_a_refused_connection_is_retried() -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.ConnectError("refused"), httpx.Response(200, json={}))
    with _client(handler) as client, refresh_deadline(policy(watch).start(60)):
        assert get_json(client, "kueue", "/apis") == {}
    assert watch.sleeps == [0.5] and len(seen) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_other_failures_are_not_retried(status: int) -> None:
    watch = Stopwatch()
    handler, seen = _answers(httpx.Response(status, json={"message": "no"}))
    with (
        _client(handler) as client,
        refresh_deadline(policy(watch).start(60)),
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


def test_a_decoded_body_is_the_data_as_it_came() -> None:
    # A secret that also reads as data must never rewrite it: redaction is for quoted text.
    body = {"teams": [{"note": f"key {TOKEN}"}]}
    handler, _ = _answers(httpx.Response(200, json=body))
    with _client(handler) as client:
        assert get_json(client, "litellm", "/team/list") == body
        assert json.loads(get_text(client, "litellm", "/team/list")) == body
