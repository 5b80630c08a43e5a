"""A closed month from LiteLLM by date: each date read once, any day's month to date summed."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.litellm.source import KIND
from exporter.sources.reading import Reading
from tests.support.litellm_rows import RowProxy, date_runs
from tests.unit.sources.litellm.test_cache import (
    AZURE,
    EXPECTED,
    KEY,
    KEY_TEAMS,
    LLAMA,
    ROWS,
    Usage,
    _cfg,
    _client,
    _config,
    _usage,
)

NOVEMBER = Month.parse("2026-11", ZoneInfo("UTC"))


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_READ_KEY", KEY)


def _read(proxy: RowProxy, reading: Reading) -> LiteLLMSnapshot:
    cfg = _cfg()
    with _client(proxy, cfg) as client:
        return KIND.fetch_from_config(client, _config(cfg), reading)


@pytest.mark.parametrize("keys", [True, False])
def test_each_date_is_read_once_and_a_days_month_to_date_is_its_dates(keys: bool) -> None:
    proxy = RowProxy(list(ROWS), KEY_TEAMS, keys=keys)
    reading = Reading.closed_month(NOVEMBER, by_day=True)
    whole = _read(proxy, reading)
    assert _usage(whole) == EXPECTED
    if keys:  # one read per date; a proxy without key breakdowns is read per model and date
        daily = [u for u in proxy.seen if "daily" in u.path]
        assert date_runs(daily) == [("2026-11-01", "2026-11-30")] and len(daily) == 30
    third = _usage(whole.as_of(reading.day_ends()[2]))  # rows of the 2nd and the 3rd
    expected_third: Usage = {
        ("t-research", "llama-3-70b", LLAMA): (0.5, 1000, 200, 4),
        ("t-research", "gpt-4o", AZURE): (1.25, 50, 20, 1),
        ("t-research", "gpt-4o-batch", AZURE): (0.4, 70, 30, 2),
        ("t-growth", "gpt-4o", AZURE): (0.1, 7, 3, 1),
        (None, "gpt-4o", AZURE): (0.25, 10, 5, 1),
        (None, "gpt-4o-batch", AZURE): (0.5, 40, 10, 2),
    }
    assert third == expected_third
    assert _usage(whole.as_of(reading.day_ends()[0])) == {}


def test_the_month_by_date_is_the_month_the_report_reads() -> None:
    by_day = _read(RowProxy(list(ROWS), KEY_TEAMS), Reading.closed_month(NOVEMBER, by_day=True))
    closed = _read(RowProxy(list(ROWS), KEY_TEAMS), Reading.closed_month(NOVEMBER))
    assert by_day.usage == closed.usage
    assert closed.dated is None
    with pytest.raises(ValueError, match="not read day by day"):
        closed.as_of(Reading.closed_month(NOVEMBER).day_ends()[3])
