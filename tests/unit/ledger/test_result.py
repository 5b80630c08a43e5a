"""The typed result: built by keyword, and what it says of folded teams and absent sources."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from exporter.ledger.attribution import OTHER
from exporter.ledger.costs.cluster import ClusterCosts
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

READING = Reading.open(FIXED_NOW, ZoneInfo("UTC"))


def test_a_team_the_cap_folded_counts_under_other() -> None:
    result = Chargeback(reading=READING, budgets={}, units=UnitEconomics(), folded_teams=("z",))
    assert (result.counted_as("z"), result.counted_as("a"), result.counted_as(OTHER)) == (
        OTHER,
        "a",
        OTHER,
    )


def test_an_absent_source_reads_empty_not_zero() -> None:
    result = Chargeback(reading=READING, budgets={}, units=UnitEconomics())
    assert (result.month, result.gpus, result.quota, result.llm) == (None, None, None, None)
    assert result.month_idle is None and result.llm_usage == {} and result.llm_pricing == ()
    idle = ClusterCosts(1.0, None, None, {}, 12.5)
    assert (
        Chargeback(reading=READING, budgets={}, units=UnitEconomics(), cluster=idle).month_idle
        == 12.5
    )
