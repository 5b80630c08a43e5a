"""FOCUS resource columns of the demo's October: named GPU and LLM models, valid, 25-hour days."""

from __future__ import annotations

import contextlib
import csv
import io

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
    assert with_id == {
        ("gpu", f"gpu-model/{H100}", "GPU Model"),
        ("llm_external", "llm-model/gpt-4o", "LLM Model"),
        ("llm_serving", "llm-model/llama-3-70b", "LLM Model"),
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


def test_the_day_summer_time_ends_prices_25_hours(october: list[dict[str, str]]) -> None:
    hours = {
        r["ConsumedQuantity"]
        for r in october
        if r["x_Component"] == "cpu" and r["x_ChargePeriodLocalDate"] == "2026-10-25"
    }
    assert hours == {"25"}
