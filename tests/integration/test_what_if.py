"""`report --month --what-if` through the real command line against the demo's fakes: one run,
every kind of key at once, the month's own figures unchanged beside it."""

from __future__ import annotations

import json

import pytest

from chargeback_demo.exporter import HISTORY_SWITCH
from chargeback_demo.exporter import main as demo_main
from tests.conftest import CLOCK


def test_the_demos_closed_month_under_another_policy_quota_and_throughput(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No backfilled Prometheus: the what-if reads nothing beyond the month's one read.
    monkeypatch.setenv(HISTORY_SWITCH, "off")
    asked = (
        "idle_policy=separate",
        "quota.cq-search=0",
        "tokens_per_second.llama-3-70b=2800",
        "gpu_flavor_price.h100=3.10",
    )
    args = ["report", "--month", "2026-10", "--format", "json"]
    assert demo_main([*args, *(f"--what-if={a}" for a in asked)], CLOCK) == 0
    report = json.loads(capsys.readouterr().out)
    what_if = report["what_if"]
    assert what_if["given"] == list(asked)
    assert what_if["idle_policy"] == {"before": "proportional", "after": "separate"}
    # "Before" is the month as its report prints it, row for row.
    before = {t["team"]: t["before"] for t in what_if["teams"]}
    assert before == {t["team"]: t["total"] for t in report["teams"]}
    assert what_if["total"]["before"] == report["total"]
    # Every row foots: each column to its total, each difference to after less before.
    for column in ("before", "after", "difference"):
        rows = round(sum(t[column] for t in what_if["teams"]), 2)
        assert rows == what_if["total"][column]
    for t in what_if["teams"]:
        assert round(t["after"] - t["before"], 2) == t["difference"]
    # Separate leaves idle on __idle__, and an H100 at 3.10 rather than the built price
    # makes the month dearer.
    after = {t["team"]: t["after"] for t in what_if["teams"]}
    assert after["__idle__"] > 0 and what_if["total"]["difference"] > 0
    assert [n.split(":")[0] for n in what_if["notes"]] == [
        "quota.cq-search",
        "tokens_per_second.llama-3-70b",
    ]
