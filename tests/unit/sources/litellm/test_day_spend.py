"""The gateway's spend per UTC date and model: over teams, unknown spend adds nothing, kept once."""

from __future__ import annotations

from datetime import date

from exporter.sources.litellm.daily import UsageMetrics
from exporter.sources.litellm.day_spend import DaySpendMemo, dated_spend, day_spend
from exporter.sources.litellm.packed import Uses

D1, D2 = date(2026, 3, 1), date(2026, 3, 2)


def test_a_date_sums_its_teams_per_model_and_skips_unknown_spend() -> None:
    usage = {
        ("research", "chat", "gpt-4o-2024-08-06"): UsageMetrics(2.0, 1, 1, 1),
        ("vision", "chat", "gpt-4o-2024-08-06"): UsageMetrics(3.0, 1, 1, 1),
        ("vision", "fast", "gpt-4o-mini"): UsageMetrics(None, 1, 1, 1),
    }
    assert day_spend(D1, usage) == {(D1, "chat", "gpt-4o-2024-08-06"): 5.0}


def test_a_month_read_by_date_stops_at_the_last_date() -> None:
    metrics = UsageMetrics(1.5, 1, 1, 1)
    dated = [(D1, [("t", None, "chat", "m", metrics)]), (D2, [("t", None, "chat", "m", metrics)])]
    assert dated_spend(dated, D1) == {(D1, "chat", "m"): 1.5}


def test_kept_dates_are_summed_once_and_again_when_packed_anew() -> None:
    uses = Uses()
    first = {("t", "chat", "m"): UsageMetrics(1.0, 1, 1, 1)}
    packed = uses.pack(first)
    memo = DaySpendMemo()
    today = {("u", "chat", "m"): UsageMetrics(4.0, 1, 1, 1)}
    read = {D2.isoformat(): today}
    month = memo.month({D1.isoformat(): packed}, uses.uses, read)
    assert month == {(D1, "chat", "m"): 1.0, (D2, "chat", "m"): 4.0}
    kept = memo.month({D1.isoformat(): packed}, uses.uses, {})
    assert kept == {(D1, "chat", "m"): 1.0}
    repaired = uses.pack({("t", "chat", "m"): UsageMetrics(7.0, 1, 1, 1)})
    assert memo.month({D1.isoformat(): repaired}, uses.uses, {}) == {(D1, "chat", "m"): 7.0}
