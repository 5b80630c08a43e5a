"""LiteLLM beside a control: null spends, tag activity gone or emptied after data, and bad tag
records each mark the source down and keep the last complete figures, never serve others.

The fixtures and helpers are test_never_wrong's: two refreshers on the same frozen fakes, the
faulted one reading through proxies that rewrite what each case says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from chargeback_demo.faultproxy import Status
from tests.integration.test_never_wrong import (
    Editor,
    Pair,
    assert_down_and_kept,
    counted,
    every,
    json_editor,
    pair,
    pair_of,
    up,
)

__all__ = ["pair", "pair_of"]  # the fixtures, found by pytest here

TAGS = "/tag/daily/activity"
DIMENSION_MTD = "chargeback_dimension_cost_month_to_date"
ASSISTANT = "product:assistant"


def _tags_only(change: Callable[[str, Any], Any]) -> Editor:
    return json_editor(change, TAGS)


def _tag_gone(path: str, body: bytes) -> bytes:
    if path.startswith(TAGS):
        raise Status(404)
    return body


def _tag_emptied(path: str, doc: Any) -> Any:
    del path
    return {**doc, "results": [], "metadata": {**doc["metadata"], "total_pages": 0}}


def _one_tag(change: Callable[[dict[str, Any]], None]) -> Editor:
    """Apply `change` to the first date's `product:assistant` entity of each tag page."""

    def edit(path: str, doc: Any) -> Any:
        del path
        for day in doc.get("results", []):
            entity = day["breakdown"]["entities"].get(ASSISTANT)
            if entity is not None:
                change(entity)
                return doc
        return doc

    return _tags_only(edit)


def _spend_nan(entity: dict[str, Any]) -> None:
    entity["metrics"]["spend"] = math.nan


def _keys_garbage(entity: dict[str, Any]) -> None:
    for part in entity["api_key_breakdown"].values():
        part["metrics"]["spend"] = "lots"
        part["metadata"]["team_id"] = 42
        return


def _one_budget_null(path: str, doc: Any) -> Any:
    del path
    for team in doc.get("teams", []):
        if team["team_id"] == "c0a8d9e3-search":
            team["spend"] = None
    return doc


@pytest.mark.parametrize(
    "editor",
    [
        json_editor(every("spend", None)),
        _tags_only(every("spend", None)),
        json_editor(_one_budget_null, "/v2/team/list"),
    ],
    ids=["every-spend-null", "tag-spend-null", "one-budget-spend-null"],
)
def test_a_null_spend_is_a_dropped_record_not_zero(pair: Pair, editor: Editor) -> None:
    # Before: every spend null took 36 series away and changed the teams' month to date, and
    # a team's null budget spend removed its budget series, with the source up.
    pair.refresh()
    pair.edit("litellm", editor)
    control, faulted = pair.refresh("litellm")
    assert_down_and_kept(control, faulted, "litellm", "malformed")
    assert counted(faulted, "chargeback_source_records_dropped_total", "litellm", "missing_field")


@pytest.mark.parametrize(
    "editor",
    [
        _one_tag(_spend_nan),
        _tags_only(every("spend", "1.5")),
        _one_tag(_keys_garbage),
    ],
    ids=["one-tag-spend-nan", "tag-spends-as-strings", "tag-key-breakdown-garbage"],
)
def test_a_dropped_tag_record_keeps_the_last_complete_split(pair: Pair, editor: Editor) -> None:
    # Before: the dimension figures were recomputed without the record, source up.
    pair.refresh()
    pair.edit("litellm", editor)
    control, faulted = pair.refresh("litellm")
    assert_down_and_kept(control, faulted, "litellm", "malformed")
    dropped = faulted["chargeback_source_records_dropped_total"]
    assert sum(v for k, v in dropped.items() if dict(k)["source"] == "litellm") > 0


@pytest.mark.parametrize(
    "editor", [_tag_gone, _tags_only(_tag_emptied)], ids=["tag-activity-404", "tag-activity-empty"]
)
def test_tag_activity_gone_after_data_waits_for_a_second_read(pair: Pair, editor: Editor) -> None:
    # Before: product assistant's LLM cost moved (-26.99 -> -27.86) and the tag spend vanished
    # from the dimensions, source up.
    pair.refresh()
    pair.edit("litellm", editor)
    control, faulted = pair.refresh("litellm")
    assert_down_and_kept(control, faulted, "litellm", "incomplete")
    # A second read that says the same confirms it: the proxy has no tag spend now.
    control, faulted = pair.refresh("litellm")
    assert up(faulted, "litellm") == 1.0
    assert faulted[DIMENSION_MTD] != control[DIMENSION_MTD]
