"""`report --by NAME`: the worked example's month by product, footed, in every text format."""

from __future__ import annotations

import json

import pytest

from exporter.config.schema import Config
from exporter.finance.report.dimensions import dimension_report, dimension_reports
from exporter.finance.report.figures import build_report
from exporter.finance.report.formats import format_report
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW
from tests.unit.ledger.dimensions.test_beyond_team import EXAMPLE, _example_records


def _joined() -> Chargeback:
    config = Config.model_validate(EXAMPLE)
    return join(
        config, Attributor(config), _example_records(), Reading.open(FIXED_NOW, config.zone)
    )


def _month(chargeback: Chargeback) -> Ledger:
    assert chargeback.month is not None
    return chargeback.month


def test_the_month_by_product_foots_to_the_teams_total() -> None:
    chargeback = _joined()
    teams = build_report(_month(chargeback), "EUR", "2026-11", {}, idle=80.0)
    product = dimension_report(chargeback, "product", teams)
    assert product.by == "product" and product.total == teams.total
    assert {r.team: str(r.total) for r in product.rows} == {
        "chat": "860.00",
        "inspection": "430.00",
        "__idle__": "0.00",
        "__unallocated__": "10.00",
    }
    assert str(product.columns["shared"]) == "90.00"
    csv_text = format_report(product, "csv")
    assert csv_text.splitlines()[0].startswith("product,gpu,cpu,idle_share,shared,llm_external")
    assert csv_text.splitlines()[0].endswith(",total,currency")  # no budget columns
    assert "chat,600.00,100.00,60.00,60.00,40.00,860.00,EUR" in csv_text
    doc = json.loads(format_report(product, "json"))
    assert doc["by"] == "product" and "teams" not in doc
    assert doc["values"][0] == {
        "value": "chat",
        "components": {
            "gpu": 600.0,
            "cpu": 100.0,
            "idle_share": 60.0,
            "shared": 60.0,
            "llm_external": 40.0,
        },
        "total": 860.0,
    }
    assert format_report(product, "table").splitlines()[3].startswith("Product ")
    assert [r.by for r in dimension_reports(chargeback, teams)] == ["product", "environment"]


def test_an_unknown_dimension_names_the_configured_ones() -> None:
    chargeback = _joined()
    teams = build_report(_month(chargeback), "EUR", "2026-11", {})
    with pytest.raises(ValueError, match="the dimensions are product, environment"):
        dimension_report(chargeback, "team", teams)
