"""The LiteLLM read: one read for team x model, the month in the configured zone, kept days."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from chargeback_demo.litellm_rows import live_end
from exporter.config.schema import Config, LiteLLMConfig, SourcesConfig
from exporter.sources.checks import Tally
from exporter.sources.litellm.cache import month_dates
from exporter.sources.litellm.decode import Days, decode_body
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.litellm.source import KIND, build_client
from exporter.sources.reading import Reading
from tests.conftest import UTC_ZONE
from tests.support.litellm_rows import Row, RowProxy, date_runs

KEY = "sk-test-viewer-read"
NOW = datetime(2026, 11, 19, 13, 30, tzinfo=UTC)
LLAMA = "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
AZURE = "azure/gpt-4o-2024-08-06"


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_READ_KEY", KEY)


def _cfg(url: str = "http://litellm:4000", **kw: Any) -> LiteLLMConfig:
    return LiteLLMConfig(url=url, api_key_env="LITELLM_READ_KEY", **{"currency": "EUR", **kw})


def _config(cfg: LiteLLMConfig, zone: str = "UTC") -> Config:
    return Config(timezone=zone, sources=SourcesConfig(litellm=cfg))


def _client(proxy: RowProxy, cfg: LiteLLMConfig) -> httpx.Client:
    return build_client(cfg, transport=httpx.MockTransport(proxy))


Usage = dict[tuple[str | None, str, str], tuple[float, int, int, int]]


def _usage(snap: LiteLLMSnapshot) -> Usage:
    out: Usage = {}
    for u in snap.usage:
        assert u.spend is not None
        out[(u.team_id, u.model, u.deployment)] = (
            round(u.spend, 9),
            u.prompt_tokens,
            u.completion_tokens,
            u.requests,
        )
    return out


def _read(proxy: RowProxy, zone: str = "UTC", now: datetime = NOW, **kw: Any) -> Usage:
    cfg = _cfg(**kw)
    with _client(proxy, cfg) as client:
        return _usage(
            KIND.fetch_from_config(client, _config(cfg, zone), Reading.open(now, ZoneInfo(zone)))
        )


# --- one read: team x model through the API-key sub-breakdowns -------------------------------

ROWS = [
    # k-res is t-research's key: one provider model per group, and AZURE behind two groups.
    Row("t-research", "2026-11-02", "k-res", LLAMA, "llama-3-70b", 1000, 200, 4, 0.5),
    Row("t-research", "2026-11-02", "k-res", AZURE, "gpt-4o", 50, 20, 1, 1.25),
    Row("t-research", "2026-11-05", "k-res", AZURE, "gpt-4o", 30, 10, 1, 0.75),
    Row("t-research", "2026-11-05", "k-res", AZURE, "gpt-4o-batch", 500, 100, 3, 3.0),
    # k-moved belonged to t-growth on the 2nd and to t-research from the 3rd (the key table
    # names t-research now): the rows keep the team of their day.
    Row("t-growth", "2026-11-02", "k-moved", AZURE, "gpt-4o", 7, 3, 1, 0.1),
    Row("t-research", "2026-11-03", "k-moved", AZURE, "gpt-4o-batch", 70, 30, 2, 0.4),
    # k-shared was moved mid-day: two teams used it on the 4th, with one model.
    Row("t-growth", "2026-11-04", "k-shared", LLAMA, "llama-3-70b", 300, 100, 2, 0.2),
    Row("t-research", "2026-11-04", "k-shared", LLAMA, "llama-3-70b", 100, 50, 1, 0.05),
    # No team: one key, one provider model behind both groups.
    Row(None, "2026-11-03", "k-none", AZURE, "gpt-4o", 10, 5, 1, 0.25),
    Row(None, "2026-11-03", "k-none", AZURE, "gpt-4o-batch", 40, 10, 2, 0.5),
]
KEY_TEAMS = {"k-res": "t-research", "k-moved": "t-research", "k-shared": "t-research"}

EXPECTED: Usage = {
    ("t-research", "llama-3-70b", LLAMA): (0.55, 1100, 250, 5),
    ("t-research", "gpt-4o", AZURE): (2.0, 80, 30, 2),
    ("t-research", "gpt-4o-batch", AZURE): (3.4, 570, 130, 5),
    ("t-growth", "gpt-4o", AZURE): (0.1, 7, 3, 1),
    ("t-growth", "llama-3-70b", LLAMA): (0.2, 300, 100, 2),
    (None, "gpt-4o", AZURE): (0.25, 10, 5, 1),
    (None, "gpt-4o-batch", AZURE): (0.5, 40, 10, 2),
}


def test_one_read_gives_team_x_model_by_hand() -> None:
    proxy = RowProxy(ROWS, KEY_TEAMS)
    assert _read(proxy) == EXPECTED
    daily = [u for u in proxy.seen if "daily" in u.path]
    # One read of each date of the month so far, none per model.
    assert date_runs(daily) == [("2026-11-01", "2026-11-19")] and len(daily) == 19


def test_one_read_equals_the_per_model_read() -> None:
    with_keys = RowProxy(ROWS, KEY_TEAMS)
    without = RowProxy(ROWS, KEY_TEAMS, keys=False)  # read per model, as before
    assert _read(with_keys) == _read(without) == EXPECTED
    per_model = {u.params.get("model") for u in without.seen if "daily" in u.path}
    assert per_model == {None, LLAMA, AZURE}


def test_a_key_two_teams_used_with_two_models_on_one_day_is_shared_pro_rata() -> None:
    # The breakdowns do not say which team sent which model through k-mix on the 6th: each
    # model is shared by the teams' shares of the key, metric by metric (the approximation).
    rows = [
        Row("t-growth", "2026-11-06", "k-mix", LLAMA, "llama-3-70b", 100, 10, 1, 1.0),
        Row("t-research", "2026-11-06", "k-mix", AZURE, "gpt-4o", 300, 30, 3, 3.0),
    ]
    got = _read(RowProxy(rows))
    # Counts are shared by largest remainder (ties to the first team by name).
    assert got == {
        ("t-growth", "llama-3-70b", LLAMA): (0.25, 25, 3, 0),
        ("t-research", "llama-3-70b", LLAMA): (0.75, 75, 7, 1),
        ("t-growth", "gpt-4o", AZURE): (0.75, 75, 8, 1),
        ("t-research", "gpt-4o", AZURE): (2.25, 225, 22, 2),
    }
    # Each model's total stays exact, and so does each team's spend.
    for model, total in ((LLAMA, (1.0, 100, 10, 1)), (AZURE, (3.0, 300, 30, 3))):
        parts = [v for k, v in got.items() if k[2] == model]
        assert tuple(round(sum(p[i] for p in parts), 9) for i in range(4)) == total
    for team, spend in (("t-growth", 1.0), ("t-research", 3.0)):
        assert round(sum(v[0] for k, v in got.items() if k[0] == team), 9) == spend


def test_a_bad_key_entry_is_dropped_and_counted_in_both_decoders() -> None:
    body = RowProxy(ROWS[:1])(
        httpx.Request("GET", "http://x/team/daily/activity/aggregated?start_date=0&end_date=9")
    ).json()
    cell = body["results"][0]["breakdown"]["models"][LLAMA]["api_key_breakdown"]["k-res"]
    cell["metrics"]["prompt_tokens"] = -37
    for text in (json.dumps(body), json.dumps(body).replace("-37", "NaN")):
        days: Days = {}
        tally = Tally()
        decode_body(text, days, tally)
        assert days["2026-11-02"]["models"][LLAMA].keys == {}
        assert sum(tally.values()) == 1
        assert set(tally) <= {"out_of_range", "non_finite"}


def test_a_well_formed_body_takes_whole_number_spend_and_unknown_fields() -> None:
    rows = [Row("t", "2026-11-02", "k", LLAMA, "llama-3-70b", 1, 2, 3, 4.0)]
    got = _read(RowProxy(rows))
    assert got == {("t", "llama-3-70b", LLAMA): (4.0, 1, 2, 3)}


# --- the month in the configured zone ---------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "now", "start", "end", "offset", "edge"),
    [
        # Auckland (UTC+13 in summer): 09:00 on 1 December there is 20:00 on 30 November UTC.
        ("Pacific/Auckland", "2026-11-30T20:00:00+00:00", "2026-12-01", "2026-12-01", -780, 13),
        # Los Angeles (UTC-8): 20:00 on 30 November there is already 1 December in UTC, and
        # that UTC date holds the evening's usage. The month began in summer time (UTC-7).
        ("America/Los_Angeles", "2026-12-01T04:00:00+00:00", "2026-11-01", "2026-12-01", 480, -7),
        ("UTC", "2026-11-19T13:30:00+00:00", "2026-11-01", "2026-11-19", 0, 0),
    ],
)
def test_the_month_is_the_zones_and_its_offset_is_sent(
    zone: str, now: str, start: str, end: str, offset: int, edge: int
) -> None:
    proxy = RowProxy([])
    _read(proxy, zone, datetime.fromisoformat(now))
    daily = [u for u in proxy.seen if "daily" in u.path]
    assert date_runs(daily) == [(start, end)]
    assert {(u.params["timezone"], u.params["include_current_utc_day"]) for u in daily} == {
        (str(offset), "true")
    }
    window = month_dates(datetime.fromisoformat(now), _config(_cfg(), zone).zone)
    assert window.edge_seconds == edge * 3600


ROWS_AT_EDGES = [
    Row("t", "2026-10-31", "k", LLAMA, "llama-3-70b", 1, 0, 1, 0.01),
    Row("t", "2026-11-30", "k", LLAMA, "llama-3-70b", 20, 0, 1, 0.2),
    Row("t", "2026-12-01", "k", LLAMA, "llama-3-70b", 300, 0, 1, 3.0),
]


def test_los_angeles_counts_the_utc_date_after_its_last_day_in_its_month() -> None:
    # 30 November 20:00 in Los Angeles: the 1 December UTC row is November's evening.
    got = _read(
        RowProxy(ROWS_AT_EDGES), "America/Los_Angeles", datetime(2026, 12, 1, 4, tzinfo=UTC)
    )
    assert got == {("t", "llama-3-70b", LLAMA): (3.2, 320, 0, 2)}


def test_auckland_starts_its_month_on_its_own_first() -> None:
    # 1 December 15:00 in Auckland: the 30 November UTC row is November's, not December's.
    got = _read(RowProxy(ROWS_AT_EDGES), "Pacific/Auckland", datetime(2026, 12, 1, 2, tzinfo=UTC))
    assert got == {("t", "llama-3-70b", LLAMA): (3.0, 300, 0, 1)}


def test_the_fake_extends_only_the_live_end_as_litellm_does() -> None:
    evening_la = datetime(2026, 12, 1, 4, tzinfo=UTC)
    assert live_end(date(2026, 11, 30), 480, evening_la) == date(2026, 12, 1)
    assert live_end(date(2026, 11, 29), 480, evening_la) == date(2026, 11, 29)
    morning_nz = datetime(2026, 11, 30, 20, tzinfo=UTC)
    assert live_end(date(2026, 12, 1), -780, morning_nz) == date(2026, 12, 1)


# --- closed days kept, open days re-read, a periodic full read --------------------------------


def _starts(proxy: RowProxy) -> list[str]:
    return [start for start, _ in date_runs(proxy.seen)]


def test_only_open_days_are_reread_until_the_reconcile_which_repairs_and_counts() -> None:
    proxy = RowProxy(list(ROWS), KEY_TEAMS)
    cfg = _cfg(reconcile_interval="1h")
    config = _config(cfg)
    with _client(proxy, cfg) as client:
        first = KIND.fetch_from_config(client, config, Reading.open(NOW, config.zone))
        # A row of a closed day appears behind the cache (a late batch write, a backfill).
        proxy.rows.append(Row("t-growth", "2026-11-02", "k-g", LLAMA, "llama-3-70b", 9, 1, 1, 1))
        stale = KIND.fetch_from_config(
            client, config, Reading.open(NOW + timedelta(minutes=5), config.zone)
        )
        repaired = KIND.fetch_from_config(
            client, config, Reading.open(NOW + timedelta(minutes=61), config.zone)
        )
    # At 13:30 UTC yesterday's rows are all written: only today is read again.
    assert _starts(proxy) == ["2026-11-01", "2026-11-19", "2026-11-01"]
    assert _usage(first) == _usage(stale) == EXPECTED
    assert (first.repairs, stale.repairs, repaired.repairs) == (0, 0, 1)
    assert _usage(repaired)[("t-growth", "llama-3-70b", LLAMA)] == (1.2, 309, 101, 3)


def test_a_new_client_and_a_new_month_read_the_whole_month() -> None:
    proxy = RowProxy(list(ROWS), KEY_TEAMS)
    cfg = _cfg(reconcile_interval="1d")
    with _client(proxy, cfg) as client:
        KIND.fetch_from_config(client, _config(cfg), Reading.open(NOW, UTC_ZONE))
        KIND.fetch_from_config(
            client, _config(cfg), Reading.open(NOW + timedelta(hours=2), UTC_ZONE)
        )
        KIND.fetch_from_config(
            client,
            _config(cfg),
            Reading.open(datetime(2026, 12, 1, 0, 10, tzinfo=UTC), UTC_ZONE),
        )
    with _client(proxy, cfg) as client:  # a restart
        KIND.fetch_from_config(
            client,
            _config(cfg),
            Reading.open(datetime(2026, 12, 1, 0, 20, tzinfo=UTC), UTC_ZONE),
        )
    assert _starts(proxy) == ["2026-11-01", "2026-11-19", "2026-12-01", "2026-12-01"]


@pytest.mark.parametrize(
    ("utc", "first_open"),
    [
        # The proxy writes spend in batches: yesterday's UTC date may gain rows for a while.
        ("2026-11-19T00:00:00+00:00", "2026-11-18"),
        ("2026-11-19T00:59:59+00:00", "2026-11-18"),
        ("2026-11-19T01:00:00+00:00", "2026-11-19"),
        ("2026-11-19T23:59:00+00:00", "2026-11-19"),
        # On the 1st, the month has no yesterday to re-read.
        ("2026-11-01T00:30:00+00:00", "2026-11-01"),
    ],
)
def test_yesterdays_utc_date_is_reread_only_while_it_may_gain_rows(
    utc: str, first_open: str
) -> None:
    window = month_dates(datetime.fromisoformat(utc), _config(_cfg(), "UTC").zone)
    assert window.open_from.isoformat() == first_open


def test_los_angeles_evening_rereads_only_the_utc_date_that_gains_rows() -> None:
    # 20:00 on 15 November in Los Angeles is 04:00 on the 16th in UTC: the 15th's UTC date
    # ended four hours ago, whatever the local date says.
    now = datetime(2026, 11, 16, 4, tzinfo=UTC)
    window = month_dates(now, _config(_cfg(), "America/Los_Angeles").zone)
    assert (window.open_from, window.end) == (date(2026, 11, 16), date(2026, 11, 16))
