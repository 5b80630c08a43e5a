"""The bill sources against the demo's fake providers over real HTTP and files: each bill read
whole, a little more than the gateway recorded, and each failing on its own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from chargeback_demo.fake_bills import UNRECORDED_BATCH, USD_TO_EUR
from chargeback_demo.litellm_rows import rows_between
from chargeback_demo.stack import DemoStack
from exporter.errors import UpstreamStatusError
from exporter.sources.bills.lines import BillKind, BillSnapshot
from exporter.sources.readers import open_readers
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import CLOCK, FIXED_NOW


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoStack]:
    """One demo stack for the module's tests."""
    stack = DemoStack(clock=CLOCK).start()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def bills(demo: DemoStack) -> dict[str, BillSnapshot]:
    """The demo's bills, read once for the module, as a refresh at FIXED_NOW reads them."""
    config = demo.config()
    reading = Reading.open(FIXED_NOW, config.zone)
    read = {}
    for reader in open_readers(config):
        if reader.name.startswith("bills."):
            read[reader.name] = reader.read(reading)
        reader.close()
    return dict(Snapshots.of(read).bills)


def test_every_bill_of_the_demo_is_read(bills: dict[str, BillSnapshot]) -> None:
    assert sorted(bills) == ["anthropic", "cloud", "openai"]
    today = FIXED_NOW.date()
    for bill in bills.values():
        assert bill.days_billed and max(bill.days_billed) < today
        assert all(line.day.month == today.month for line in bill.lines)
    assert {line.kind for line in bills["cloud"].lines} == {BillKind.CLUSTER}
    # The cluster tag keeps the node; the volume and the other team's VM are left out.
    assert {line.resource_id for line in bills["cloud"].lines} == {"gpu-node-1"}


def test_openai_bills_a_little_more_than_the_gateway_recorded(
    demo: DemoStack, bills: dict[str, BillSnapshot]
) -> None:
    day = date(FIXED_NOW.year, FIXED_NOW.month, 2)
    lines = bills["openai"].lines
    billed = sum(line.amount for line in lines if line.day == day) * USD_TO_EUR
    rows = rows_between(demo.cluster, day, day, FIXED_NOW)
    recorded = sum(row.spend for row in rows if row.provider == "openai")
    # The cache reads the gateway missed (4 % of the input's cost): a few percent over.
    assert 1.0 < billed / recorded < 1.05
    batch = [line for line in lines if line.description.endswith("batch input")]
    assert [(line.day.day, line.amount) for line in batch] == [(3, UNRECORDED_BATCH)]


def test_a_refused_admin_key_downs_that_bill_alone(demo: DemoStack) -> None:
    (demo.secrets / "openai-admin-key").write_text("sk-admin-wrong-key-000000\n")
    try:
        config = demo.config()
        readers = {reader.name: reader for reader in open_readers(config)}
        reading = Reading.open(FIXED_NOW, config.zone)
        with pytest.raises(UpstreamStatusError, match=r"admin key refused \(401\)") as err:
            readers["bills.openai"].read(reading)
        assert "sk-admin-wrong-key" not in str(err.value)
        assert readers["bills.anthropic"].read(reading)
        for reader in readers.values():
            reader.close()
    finally:
        (demo.secrets / "openai-admin-key").write_text("sk-admin-demo-openai-costs\n")


def test_the_fakes_page_as_the_apis_do(demo: DemoStack) -> None:
    start = int(FIXED_NOW.replace(day=1, hour=0, minute=0, second=0).timestamp())
    headers = {"Authorization": "Bearer sk-admin-demo-openai-costs"}
    with httpx.Client(base_url=demo.urls["openai_costs"], headers=headers) as client:
        params = {"start_time": str(start), "limit": "3", "group_by[]": "line_item"}
        first = client.get("/v1/organization/costs", params=params).json()
        assert first["has_more"] is True and len(first["data"]) == 3
        second = client.get(
            "/v1/organization/costs", params={**params, "page": first["next_page"]}
        ).json()
        assert second["data"][0]["start_time"] == first["data"][-1]["end_time"]
    key = {"x-api-key": "sk-ant-admin01-demo-cost-report", "anthropic-version": "2023-06-01"}
    with httpx.Client(base_url=demo.urls["anthropic_costs"], headers=key) as client:
        page = client.get(
            "/v1/organizations/cost_report",
            params={"starting_at": "2026-11-01T00:00:00Z", "limit": "2"},
        ).json()
        assert page["has_more"] is True and page["next_page"].startswith("page_")
        assert page["data"][0]["results"][0]["amount"] == "83.25"
