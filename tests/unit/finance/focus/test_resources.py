"""FOCUS rows per resource: GPU and LLM cells split by model, footing to the cell and the day."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from msgspec.structs import asdict

from exporter.finance.focus.columns import COLUMNS
from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.resources import NO_RESOURCE, resource, split
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.report.figures import build_report
from exporter.ledger.costs.ledger import Ledger
from exporter.sources.opencost.source import parse_allocation_response
from tests.support.focus_spec import violations

ZONE = ZoneInfo("Europe/Madrid")
START = datetime(2026, 10, 1, tzinfo=ZONE)
H100, A100 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"


def _day(i: int, parts: dict[tuple[str, str, str], tuple[float, float]]) -> DayLedger:
    """A day of the synthetic month: per (team, component, resource) (weight, quantity)."""
    costs: dict[tuple[str, str], float] = defaultdict(float)
    quantities: dict[tuple[str, str], float] = defaultdict(float)
    for (team, component, _), (weight, quantity) in parts.items():
        costs[(team, component)] += weight
        quantities[(team, component)] += quantity
    start = START + timedelta(days=i)
    return DayLedger(
        start,
        start + timedelta(days=1),
        dict(costs),
        dict(quantities),
        {k: w for k, (w, _) in parts.items()},
        {k: q for k, (_, q) in parts.items()},
    )


def _ctx() -> FocusContext:
    end = START + timedelta(days=2)
    return FocusContext("EUR", START, end, "c1", "Platform", "Platform", "c1-2026-10")


def test_two_gpu_models_and_an_unknown_one_split_the_cell_and_each_day_by_cost() -> None:
    # Day 1: 10 H100-hours at 1.40 (14.00) and 5 A100-hours at 0.80 (4.00); day 2: 4 H100-hours
    # (5.60) and 2 GPU-hours on a node OpenCost named no model for (1.00). Month: 24.60.
    days = [
        _day(0, {("a", "gpu", H100): (14.0, 10.0), ("a", "gpu", A100): (4.0, 5.0)}),
        _day(1, {("a", "gpu", H100): (5.6, 4.0), ("a", "gpu", NO_RESOURCE): (1.0, 2.0)}),
    ]
    ledger = Ledger({("a", "gpu"): 24.6})
    report = build_report(ledger, "EUR", "2026-10", {}, closed=True)
    rows = [r for r in focus_rows(report, days, _ctx()) if r.SubAccountId == "a"]
    got = [(r.ResourceId, r.x_ChargePeriodLocalDate, r.BilledCost) for r in rows]
    assert got == [
        (f"c1/gpu-model/{A100}", "2026-10-01", "4.00"),
        (f"c1/gpu-model/{H100}", "2026-10-01", "14.00"),
        (f"c1/gpu-model/{H100}", "2026-10-02", "5.60"),
        (None, "2026-10-02", "1.00"),
    ]
    assert [r.ConsumedQuantity for r in rows] == ["5.0", "10.0", "4.0", "2.0"]
    assert [r.ResourceName for r in rows] == [A100, H100, H100, None]
    assert [r.ResourceType for r in rows] == ["GPU Model", "GPU Model", "GPU Model", None]
    assert all(violations(list(COLUMNS), asdict(r)) == [] for r in rows)


def test_a_cell_that_differs_from_its_weights_is_split_by_them_and_still_foots() -> None:
    # Two external models: LiteLLM spend 2.00 and 1.00 on day 1, 1.00 and 0 on day 2 (4.00),
    # but the ledger's cell is 10.01 (e.g. more spend the proxy booked late): 3/4 and 1/4.
    days = [
        _day(
            0,
            {("a", "llm_external", "gpt-4o"): (2.0, 900), ("a", "llm_external", "o3"): (1, 50)},
        ),
        _day(1, {("a", "llm_external", "gpt-4o"): (1.0, 400)}),
    ]
    report = build_report(Ledger({("a", "llm_external"): 10.01}), "EUR", "2026-10", {})
    rows = [r for r in focus_rows(report, days, _ctx()) if r.SubAccountId == "a"]
    by_model: dict[str | None, Decimal] = defaultdict(Decimal)
    for r in rows:
        by_model[r.ResourceName] += Decimal(r.BilledCost)
    # 10.01 x 3/4 = 7.5075 and 10.01 x 1/4 = 2.5025: largest remainder gives 7.51 and 2.50.
    assert dict(by_model) == {"gpt-4o": Decimal("7.51"), "o3": Decimal("2.50")}
    gpt = [r for r in rows if r.ResourceName == "gpt-4o"]
    assert [r.BilledCost for r in gpt] == ["5.01", "2.50"]  # 7.51 by the days' 2 : 1
    assert [r.ConsumedQuantity for r in gpt] == ["900.0", "400.0"]
    assert {r.ResourceId for r in rows} == {"c1/llm-model/gpt-4o", "c1/llm-model/o3"}


def test_split_is_exact_and_even_without_weights() -> None:
    assert split(100, ["x", "y", "z"], [Decimal(1), Decimal(1), Decimal(1)]) == {
        "x": 34,
        "y": 33,
        "z": 33,
    }
    assert split(-7, ["x", "y"], [Decimal(0), Decimal(0)]) == {"x": -3, "y": -4}
    assert sum(split(-1490, ["x", "y"], [Decimal("0.3"), Decimal("0.7")]).values()) == -1490
    assert split(5, [], []) == {}
    assert resource("cpu", "x") is None and resource("gpu", NO_RESOURCE) is None


def test_opencost_gpu_model_is_metadata_a_bad_one_is_unknown_not_a_dropped_row() -> None:
    base = {"properties": {"namespace": "ns", "node": "n1"}, "gpuHours": 2, "gpuCost": 2.8}
    body = {
        "code": 200,
        "data": [
            {
                "a": {**base, "gpuAllocation": {"gpuModel": H100, "gpuUUID": "GPU-1"}},
                "b": {**base, "gpuAllocation": None},
                "c": {**base, "gpuAllocation": {"gpuModel": 7}},
                "d": base,
                "e": {**base, "gpuAllocation": {"gpuModel": H100}},
            },
            # A later step: `d` gains a model, `e` disagrees with its first one.
            {
                "d": {**base, "gpuAllocation": {"gpuModel": A100}},
                "e": {**base, "gpuAllocation": {"gpuModel": A100}},
            },
        ],
    }
    allocations, _ = parse_allocation_response(body)
    assert {a.name: a.gpu_model for a in allocations} == {
        "a": H100,
        "b": "",
        "c": "",
        "d": A100,
        "e": "",
    }
    assert {a.name: a.gpu_hours for a in allocations}["e"] == 4
