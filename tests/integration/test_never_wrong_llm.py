"""LiteLLM beside a control: null spends, tag activity gone or emptied after data, and bad tag
records each mark the source down and keep the last complete figures, never serve others.

The fixtures and helpers are test_never_wrong's: two refreshers on the same frozen fakes, the
faulted one reading through proxies that rewrite what each case says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chargeback_demo.faultproxy import FaultProxy, Status
from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.cli import main
from tests.conftest import CLOCK
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


# --- the report: an empty part is read again, and two reads that disagree are refused ---------


class _EmptyTags:
    """The tag activity empty on the first read (on every read: `first_only` False)."""

    def __init__(self, *, first_only: bool) -> None:
        self.first_only = first_only
        self.reads = 0  # reads of the tag activity: requests for its first page

    def __call__(self, path: str, body: bytes) -> bytes:
        if not path.startswith(TAGS):
            return body
        query = path.partition("?")[2].split("&")
        self.reads += "page=1" in query
        if self.first_only and self.reads > 1:
            return body
        return json.dumps(_tag_emptied(path, json.loads(body))).encode()


@pytest.fixture
def report_config(stack: DemoStack, tmp_path: Path) -> Iterator[tuple[str, FaultProxy]]:
    """A config file whose LiteLLM is read through a fault proxy."""
    proxy = FaultProxy(stack.urls["litellm"], delay=0.05).start()
    data = demo_config_dict({**stack.urls, "litellm": proxy.url}, str(stack.secrets))
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    yield str(path), proxy
    proxy.stop()


@pytest.mark.parametrize("format_", ["json", "focus"])
def test_the_report_refuses_reads_that_disagree_on_the_tag_activity(
    report_config: tuple[str, FaultProxy], capsys: pytest.CaptureFixture[str], format_: str
) -> None:
    # Before: the report printed the tag activity's first, empty read as the month (exit 0).
    path, proxy = report_config
    proxy.editor = _EmptyTags(first_only=True)
    proxy.set("edit")
    assert main(["report", "--config.file", path, "--format", format_], CLOCK) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        "error: litellm: the tag activity held data in one read and none in the next; "
        "the report cannot tell which read is whole: retry it once litellm answers the same "
        "twice"
    ) in captured.err


@pytest.mark.parametrize("format_", ["json", "focus"])
def test_the_report_prints_a_part_that_two_reads_find_empty(
    report_config: tuple[str, FaultProxy], capsys: pytest.CaptureFixture[str], format_: str
) -> None:
    # Confirmed by a second read, the month holds no tag spend: printed, as the server would.
    path, proxy = report_config
    proxy.editor = editor = _EmptyTags(first_only=False)
    proxy.set("edit")
    assert main(["report", "--config.file", path, "--format", format_], CLOCK) == 0
    assert capsys.readouterr().out
    assert editor.reads == 2
