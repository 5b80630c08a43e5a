"""Per-record checks: dropped records fail a read, and sudden emptiness waits for a second read."""

from __future__ import annotations

import pytest

from exporter.errors import RecordsDropped, UpstreamIncomplete
from exporter.sources.checks import (
    DUPLICATE,
    MAX_LABEL,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Emptiness,
    Tally,
    label,
    refuse_dropped,
)


def test_a_dropped_record_fails_the_read_naming_the_first_and_counting_all() -> None:
    tally = Tally()
    tally.drop(BadRecord(NON_FINITE, "row 'a': spend is not finite"))
    tally.drop(BadRecord(NON_FINITE, "row 'b': spend is not finite"))
    tally[DUPLICATE] += 3
    with pytest.raises(RecordsDropped) as caught:
        refuse_dropped("litellm", tally, "daily rows")
    message = str(caught.value)
    assert message.startswith("litellm: daily rows dropped: 2 (2 non_finite; first: row 'a'")
    assert caught.value.dropped == {"duplicate": 3, "non_finite": 2}
    assert caught.value.reason == "malformed"


def test_identical_duplicates_alone_never_fail_a_read() -> None:
    tally = Tally()
    tally[DUPLICATE] += 2
    refuse_dropped("kueue", tally, "queues")


def test_the_first_reason_is_kept_short_and_travels_with_the_counts() -> None:
    first, other = Tally(), Tally()
    other.drop(BadRecord(NON_FINITE, "x" * 1000))
    first.add(other)
    assert first == {NON_FINITE: 1} and len(first.example) == 200


def test_emptiness_after_data_waits_for_a_second_read_that_says_the_same() -> None:
    seen = Emptiness()
    seen.check("kueue", {"the list": True})
    with pytest.raises(UpstreamIncomplete, match="the list came back empty after holding data"):
        seen.check("kueue", {"the list": False})
    seen.check("kueue", {"the list": False})  # confirmed: the upstream holds nothing now
    seen.check("kueue", {"the list": False})
    seen.check("kueue", {"the list": True})
    with pytest.raises(UpstreamIncomplete):
        seen.check("kueue", {"the list": False})


def test_a_part_never_seen_with_data_may_start_empty() -> None:
    seen = Emptiness()
    seen.check("litellm", {"2026-11-15": False})
    seen.check("litellm", {"2026-11-15": True, "2026-11-16": False})


def test_a_different_emptiness_is_doubted_afresh() -> None:
    seen = Emptiness()
    seen.check("litellm", {"a": True, "b": True})
    with pytest.raises(UpstreamIncomplete):
        seen.check("litellm", {"a": False, "b": True})
    with pytest.raises(UpstreamIncomplete, match="a, b came back empty"):
        seen.check("litellm", {"a": False, "b": False})
    seen.check("litellm", {"a": False, "b": False})


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("bad\udc80name", WRONG_TYPE),  # Python's JSON parser lets a lone surrogate through
        ("x" * (MAX_LABEL + 1), OUT_OF_RANGE),
        (42, WRONG_TYPE),
    ],
)
def test_a_name_no_exposition_can_carry_is_a_bad_record(value: object, reason: str) -> None:
    with pytest.raises(BadRecord) as caught:
        label(value, "a model name")
    assert caught.value.reason == reason
    assert "\udc80" not in str(caught.value)  # the message never carries the bad text


@pytest.mark.parametrize("value", ["", "llama-3-70b", "équipe données", "x" * MAX_LABEL, "🚀"])
def test_names_of_any_script_up_to_the_bound_are_kept(value: str) -> None:
    assert label(value, "a name") is value
