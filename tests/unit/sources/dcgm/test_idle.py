"""DCGM through Prometheus, month to date: the day pieces, idle steps by hand, checks, caching."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config
from exporter.errors import RecordsDropped, UpstreamPayloadError, UpstreamStatusError
from exporter.exposition.catalogue.gpus import (
    TEAM_GPU_IDLE_SECONDS_MONTH_TO_DATE,
    TEAM_GPU_WASTE_COST_MONTH_TO_DATE,
)
from exporter.exposition.series.gpus import idle_gpu_samples
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.gpus import idle_gpu_hours, model_price
from exporter.sources.dcgm.idle import Piece, idle_expr, pieces
from exporter.sources.dcgm.records import IdleHours
from exporter.sources.dcgm.source import KIND, DcgmSnapshot, build_client
from exporter.sources.reading import Reading

H100 = "NVIDIA H100 80GB HBM3"
# Los Angeles: the month starts at 07:00 UTC, and 1 November 2026 is 25 hours long (PDT->PST).
NOW = datetime(2026, 11, 3, 10, 0, tzinfo=UTC)
ENDS = ("2026-11-02T06:59:59.999", "2026-11-03T06:59:59.999", "2026-11-03T09:59:59.999")


def _config(**dcgm: Any) -> Config:
    prometheus = {"url": "http://prometheus.invalid:9090", "workload_labels": "plain"}
    return Config.model_validate(
        {
            "timezone": "America/Los_Angeles",
            "sources": {"dcgm": {"prometheus": prometheus, **dcgm}},
            "teams": [{"name": "alpha", "namespaces": ["ns-a"]}],
        }
    )


def _series(gpu: str, pod: str = "", namespace: str = "", **extra: str) -> dict[str, str]:
    labels = {"gpu": gpu, "UUID": f"GPU-{gpu}", "modelName": H100, "Hostname": "n1", **extra}
    if pod:
        labels.update(pod=pod, namespace=namespace, container="main")
    return labels


def _vector(*samples: tuple[dict[str, str], str]) -> dict[str, Any]:
    result = [{"metric": m, "value": [1_793_000_000.5, v]} for m, v in samples]
    random.Random(7).shuffle(result)  # Prometheus promises no order
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def _at(request: httpx.Request) -> str:
    moment = datetime.fromtimestamp(float(request.url.params["time"]), tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


MIG = {"GPU_I_PROFILE": "3g.40gb", "GPU_I_ID": "2"}
# Idle steps per piece end, per metric, as Prometheus would count them.
ENGINE = {
    ENDS[0]: [
        (_series("0", "p0", "ns-a"), "288"),  # idle all day: 24 h
        (_series("1", "p1", "ns-b", **MIG), "144"),  # 12 h of a 3/7 instance
        (_series("2"), "288"),  # nobody held it: not waste
    ],
    ENDS[1]: [
        (_series("0", "p0", "ns-a"), "NaN"),
        (_series("1", "p1", "ns-b", **MIG), "289"),  # more steps than the day has
    ],
    ENDS[2]: [(_series("0", "p0", "ns-a"), "36"), (_series("0", "q0", "ns-a"), "0")],
}
UTIL = {
    ENDS[0]: [
        (_series("3", "p3", "ns-b"), "12"),  # an older card without profiling metrics: 1 h
        (_series("0", "p0", "ns-a"), "100"),  # engine activity exists for it: not used
    ],
    ENDS[1]: [(_series("3", "p3", "ns-b"), "-1")],
    ENDS[2]: [],
}


# The counts no piece can hold; read as 0 unless the answer is `spoiled`.
BAD_COUNTS = frozenset({"NaN", "289", "-1"})


def _answer(
    seen: list[httpx.Request], *, spoiled: bool = False
) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        expr = request.url.params["query"]
        if "sum_over_time" not in expr:  # the utilisation queries
            return httpx.Response(200, json=_vector((_series("0", "p0", "ns-a"), "0.01")))
        table = ENGINE if "GR_ENGINE_ACTIVE" in expr else UTIL
        rows = [
            (labels, "0" if value in BAD_COUNTS and not spoiled else value)
            for labels, value in table.get(_at(request), [])
        ]
        return httpx.Response(200, text=json.dumps(_vector(*rows)))

    return answer


def _fetch(
    config: Config, answer: Callable[[httpx.Request], httpx.Response]
) -> Callable[[datetime], DcgmSnapshot]:
    assert config.sources.dcgm is not None
    client = build_client(config.sources.dcgm, transport=httpx.MockTransport(answer))
    return lambda now: KIND.fetch_from_config(client, config, Reading.open(now, config.zone))


def test_pieces_are_days_from_the_zones_month_start_to_now() -> None:
    start = datetime(2026, 11, 1, 7, 0, tzinfo=UTC)
    got = pieces(start, NOW)
    day = 86_400_000
    begin = int(start.timestamp() * 1000)
    assert got == [
        Piece(begin, begin + day),
        Piece(begin + day, begin + 2 * day),
        Piece(begin + 2 * day, begin + 2 * day + 3 * 3_600_000),
    ]
    assert [p.steps(300_000) for p in got] == [288, 288, 36]
    # Steps sit at multiples of the step: [1 s, 41 s) holds 15 s and 30 s; [0, 40 s) also 0 s.
    assert Piece(1_000, 41_000).steps(15_000) == 2
    assert Piece(0, 40_000).steps(15_000) == 3


def test_the_expression_counts_held_idle_steps_split_among_sharing_pods() -> None:
    expr = idle_expr("DCGM_FI_DEV_GPU_UTIL", 5.0, ("gpu", "pod"), 86_400_000, 300_000)
    mean = "avg by (gpu, pod) (DCGM_FI_DEV_GPU_UTIL)"
    on = "on (gpu, UUID, uuid, Hostname, hostname, GPU_I_ID)"
    assert expr == (
        f"sum_over_time((({mean} < bool 5) / {on} group_left "
        f"count by (gpu, UUID, uuid, Hostname, hostname, GPU_I_ID) ({mean}))"
        "[86400000ms:300000ms])"
    )


def test_idle_hours_by_hand() -> None:
    seen: list[httpx.Request] = []
    snapshot = _fetch(_config(), _answer(seen))(NOW)
    idle = [r for r in seen if "sum_over_time" in r.url.params["query"]]
    # One query per piece and metric, each 1 ms before its piece's end, over the piece's length.
    assert sorted({_at(r) for r in idle}) == list(ENDS)
    assert len(idle) == 6
    ranges = {_at(r): r.url.params["query"].rsplit("[", 1)[1] for r in idle}
    assert ranges[ENDS[0]] == ranges[ENDS[1]] == "86400000ms:300000ms])"
    assert ranges[ENDS[2]] == "10800000ms:300000ms])"
    # The engine queries compare with the ratio, GPU_UTIL with the percent.
    assert all(
        "< bool 0.05)" in r.url.params["query"] or "< bool 5)" in r.url.params["query"]
        for r in idle
    )
    got = {(e.namespace, e.pod): e.hours for e in snapshot.idle_hours or ()}
    assert got == pytest.approx(
        {("ns-a", "p0"): 24 + 3, ("ns-a", "q0"): 0.0, ("ns-b", "p1"): 12 * 3 / 7, ("ns-b", "p3"): 1}
    )
    assert snapshot.dropped == {}


def test_bad_counts_are_dropped_counted_and_fail_the_read() -> None:
    # Their idle hours, and the waste they cost, would be missing from the month to date.
    with pytest.raises(RecordsDropped) as caught:
        _fetch(_config(), _answer([], spoiled=True))(NOW)
    assert caught.value.dropped == {"non_finite": 1, "out_of_range": 2}


def test_closed_days_are_kept_and_a_new_month_starts_afresh() -> None:
    seen: list[httpx.Request] = []
    read = _fetch(_config(), _answer(seen))
    read(NOW)
    seen.clear()
    later = read(NOW + timedelta(minutes=1))
    idle = [r for r in seen if "sum_over_time" in r.url.params["query"]]
    # Only the open piece is asked again (twice: one query per metric).
    assert [_at(r) for r in idle] == ["2026-11-03T10:00:59.999"] * 2
    assert {e.pod: e.hours for e in later.idle_hours or ()}["p1"] == pytest.approx(12 * 3 / 7)
    seen.clear()
    read(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))  # 01:00 PST on 1 December
    idle = [r for r in seen if "sum_over_time" in r.url.params["query"]]
    assert [_at(r) for r in idle] == ["2026-12-01T08:59:59.999"] * 2


def test_a_piece_that_closed_moments_ago_is_read_again() -> None:
    seen: list[httpx.Request] = []
    read = _fetch(_config(), _answer(seen))
    just_after = datetime(2026, 11, 3, 7, 5, tzinfo=UTC)  # day 2 ended 5 min ago: not settled
    read(just_after)
    seen.clear()
    read(just_after + timedelta(seconds=30))
    ends = sorted({_at(r) for r in seen if "sum_over_time" in r.url.params["query"]})
    assert ends == ["2026-11-03T06:59:59.999", "2026-11-03T07:05:29.999"]


def test_an_error_envelope_from_an_idle_query_fails_the_refresh() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if "sum_over_time" in request.url.params["query"]:
            body = {"status": "error", "errorType": "execution", "error": "query processing "}
            body["error"] += "would load too many samples into memory in query execution"
            return httpx.Response(422, json=body)
        return httpx.Response(200, json=_vector((_series("0", "p0", "ns-a"), "0.01")))

    with pytest.raises(UpstreamStatusError, match="too many samples"):
        _fetch(_config(), answer)(NOW)

    def wrong_type(request: httpx.Request) -> httpx.Response:
        if "sum_over_time" in request.url.params["query"]:
            return httpx.Response(200, json={"status": "success", "data": {"resultType": "scalar"}})
        return httpx.Response(200, json=_vector((_series("0", "p0", "ns-a"), "0.01")))

    with pytest.raises(UpstreamPayloadError, match="instant vector"):
        _fetch(_config(), wrong_type)(NOW)


def _attributor() -> Attributor:
    return Attributor(
        Config.model_validate(
            {
                "teams": [{"name": "alpha", "namespaces": ["ns-a"]}, {"name": "beta"}],
                "attribution": {"team_label_keys": ["team"]},
            }
        )
    )


def test_month_waste_prices_each_models_hours_and_leaves_unpriced_teams_out() -> None:
    idle = (
        IdleHours("ns-a", "p0", H100, (), 27.0),
        IdleHours("ns-a", "p1", "NVIDIA A30", (), 2.5),
        IdleHours("ns-x", "p2", H100, (("team", "beta"),), 4.0),
        IdleHours("ns-x", "p3", "Tesla T4", (("team", "beta"),), 1.0),  # no price known
        IdleHours("ns-y", "p4", "Tesla T4", (("team", "gamma"),), 0.0),  # held, never idle
    )
    snapshot = DcgmSnapshot((), idle_hours=idle)
    price = model_price({H100: 2.0, "nvidia a30": 0.8})
    samples = idle_gpu_samples(idle_gpu_hours(snapshot, _attributor(), price) or ())
    got = {(s.family, dict(s.labels)["team"]): s.value for s in samples}
    # Exposed in GPU-seconds: 3,600 per idle GPU-hour.
    seconds, cost = TEAM_GPU_IDLE_SECONDS_MONTH_TO_DATE, TEAM_GPU_WASTE_COST_MONTH_TO_DATE
    assert got == pytest.approx(
        {
            (seconds, "alpha"): 29.5 * 3600,
            (cost, "alpha"): 27 * 2.0 + 2.5 * 0.8,
            (seconds, "beta"): 5.0 * 3600,
            (seconds, "gamma"): 0.0,
            (cost, "gamma"): 0.0,
        }
    )


def test_modes_without_history_expose_no_month_figures() -> None:
    snapshot = DcgmSnapshot(())
    assert snapshot.idle_hours is None
    assert idle_gpu_hours(snapshot, _attributor(), model_price({H100: 2.0})) is None
