"""FOCUS resource columns of the demo's October: named GPU and LLM models, valid, 25-hour days."""

from __future__ import annotations

import contextlib
import csv
import io
from decimal import Decimal

import pytest

from chargeback_demo.exporter import main as demo_main
from tests.conftest import CLOCK
from tests.support.focus_spec import violations

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def october() -> list[dict[str, str]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert demo_main(["report", "--format", "focus", "--month", "2026-10"], CLOCK) == 0
    return list(csv.DictReader(io.StringIO(out.getvalue())))


def test_the_demo_names_its_gpu_and_llm_models_and_nothing_else(
    october: list[dict[str, str]],
) -> None:
    named = {(r["x_Component"], r["ResourceId"], r["ResourceType"]) for r in october}
    with_id = {n for n in named if n[1]}
    # Ids carry the cluster: another cluster's H100 is another resource.
    assert with_id == {
        ("gpu", f"demo-madrid/gpu-model/{H100}", "GPU Model"),
        ("llm_external", "demo-madrid/llm-model/gpt-4o", "LLM Model"),
        ("llm_serving", "demo-madrid/llm-model/llama-3-70b", "LLM Model"),
    }
    assert {c for c, rid, _ in named if not rid} >= {"cpu", "ram", "idle_share"}


def test_the_validator_checks_the_resource_columns(october: list[dict[str, str]]) -> None:
    header = list(october[0])
    rows = [{k: (v or None) for k, v in r.items()} for r in october]
    named = next(r for r in rows if r["ResourceId"])
    plain = next(r for r in rows if not r["ResourceId"])
    assert violations(header, named) == [] and violations(header, plain) == []
    broken = [
        {**plain, "ResourceName": "gpt-4o"},  # a name without an id
        {**plain, "ResourceType": "LLM Model"},  # a type without an id
        {**named, "ResourceType": None},  # an id without a type
        {**named, "ResourceName": named["ResourceId"]},  # a name that repeats the id
    ]
    for row in broken:
        assert violations(header, row), row


def test_the_day_summer_time_ends_consumes_25_hours(october: list[dict[str, str]]) -> None:
    # Research and search hold their cores all day: the 25-hour day has 25/24 of their
    # core-hours (vision's daytime job runs its usual hours).
    # A team's day is split by its combinations of dimension values: their quantities add up.
    def core_hours(team: str, day: str) -> Decimal:
        return sum(
            (
                Decimal(r["ConsumedQuantity"])
                for r in october
                if (r["SubAccountId"], r["x_Component"], r["x_ChargePeriodLocalDate"])
                == (team, "cpu", day)
            ),
            Decimal(0),
        )

    assert [core_hours("research", f"2026-10-2{d}") for d in (4, 5, 6)] == [512, 536, 512]
    assert core_hours("search", "2026-10-25") == 200
