"""The HTML statement: the report's figures in charts and tables, forecasts, escaping, caching."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from babel import Locale

from exporter.config.schema import Config
from exporter.finance.report.figures import build_report, model_rows
from exporter.finance.report.forecast import with_forecast_table
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.operations import with_operations
from exporter.finance.statement.figures import Statement, build_statement, for_team
from exporter.finance.statement.html import statement_html
from exporter.finance.statement.served import render_statement, statement_artefact
from exporter.ledger.attribution import IDLE, UNALLOCATED, Placement
from exporter.ledger.costs.backlog import Entry, backlog
from exporter.ledger.costs.cluster import ClusterCosts
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.forecast.build import with_forecast
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.result import Chargeback, LlmFigures
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading
from tests.support.statement_dom import read_page

EVIL_TEAM = "<script>alert(1)</script>"
EVIL_MODEL = "<img src=x onerror=alert(2)>"
# Mid-month in UTC: 15 days and 11.5 hours, 371.5 hours, are left of November.
AT = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
NUMBERS = Numbers(Locale("en"), "EUR")


def _ledger(costs: dict[tuple[str, str], float]) -> Ledger:
    ledger = Ledger()
    for (team, component), amount in costs.items():
        ledger.add(team, component, amount)
    return ledger


def _config() -> Config:
    return Config.model_validate({"timezone": "UTC", "currency": "EUR"})


def _chargeback(**overrides: object) -> Chargeback:
    fields: dict[str, object] = {
        "reading": Reading.open(AT, ZoneInfo("UTC")),
        "hourly": _ledger({("research", "gpu"): 2.0, ("research", "llm_external"): 0.1}),
        "month": _ledger(
            {
                ("research", "gpu"): 700.0,
                ("research", "llm_external"): 30.0,
                ("vision", "gpu"): 250.0,
                ("vision", "borrowed"): 12.5,
                (UNALLOCATED, "cpu"): 4.0,
            }
        ),
        "budgets": {("research", "gpu"): 2000.0, ("research", "llm"): 50.0},
        "units": UnitEconomics(),
        "cluster": _cluster(0.0),
    }
    if "month_idle" in overrides:
        overrides["cluster"] = _cluster(overrides.pop("month_idle"))  # type: ignore[arg-type]
    if "llm_usage" in overrides:
        overrides["llm"] = LlmFigures(usage=overrides.pop("llm_usage"), budgets=())  # type: ignore[arg-type]
    fields.update(overrides)
    return Chargeback(**fields)  # type: ignore[arg-type]


def _cluster(month_idle: float) -> ClusterCosts:
    return ClusterCosts(0.0, None, None, {}, month_idle)


def _statement(chargeback: Chargeback, *, closed: bool = False) -> str:
    config = _config()
    assert chargeback.month is not None
    report = build_report(
        chargeback.month,
        "EUR",
        "2026-11",
        chargeback.budgets,
        model_rows(chargeback.llm_usage, chargeback.llm_pricing, {}),
        idle=chargeback.month_idle,
        closed=closed,
    )
    return statement_html(build_statement(report, chargeback, config), NUMBERS)


def test_the_budget_forecast_is_the_exporters_month_end_forecast() -> None:
    budgets = read_page(_statement(with_forecast(_chargeback())))["charts"]["budgets"]
    forecast = budgets["Forecast at month end"]
    # 14.5208 of 30 days elapsed (12:30 on the 15th, UTC): GPU 700 / 14.5208 x 30 = 1,446.20;
    # LLM 30 / 14.5208 x 30 = 61.98 (docs/forecast.md: the run rate, no whole days known).
    assert forecast == {"research (GPU)": "1,446.20", "research (LLM)": "61.98"}
    assert budgets["Month to date"] == {"research (GPU)": "700.00", "research (LLM)": "30.00"}
    assert budgets["Budget"] == {"research (GPU)": "2,000.00", "research (LLM)": "50.00"}


def test_a_join_without_a_forecast_forecasts_what_it_spent() -> None:
    budgets = read_page(_statement(_chargeback()))["charts"]["budgets"]
    assert budgets["Forecast at month end"] == budgets["Month to date"]


def test_the_month_to_date_statement_has_a_forecast_table() -> None:
    chargeback = with_forecast(_chargeback())
    assert chargeback.month is not None
    report = build_report(chargeback.month, "EUR", "2026-11", chargeback.budgets, (), idle=0.0)
    page = statement_html(
        build_statement(with_forecast_table(report, chargeback), chargeback, _config()), NUMBERS
    )
    assert "Forecast of the month&#x27;s end (EUR): low, month end, high" in page
    assert "1,508.18" in page  # research: 730 / 14.5208 x 30


def test_a_closed_month_forecasts_what_it_spent() -> None:
    budgets = read_page(_statement(_chargeback(), closed=True))["charts"]["budgets"]
    # What it spent, once: no month-to-date bar beside an equal month-end one.
    assert budgets == {
        "Budget": {"research (GPU)": "2,000.00", "research (LLM)": "50.00"},
        "Spent": {"research (GPU)": "700.00", "research (LLM)": "30.00"},
    }


def test_idle_parts_add_to_the_headline_idle() -> None:
    # 100 of idle: 30 and 20 shared onto teams, 10 on __idle__, and 40 absorbed by a
    # reservation (in neither `idle_share` nor `__idle__`).
    month = _ledger(
        {
            ("research", "gpu"): 500.0,
            ("research", "idle_share"): 30.0,
            ("vision", "idle_share"): 20.0,
            (IDLE, "gpu"): 10.0,
        }
    )
    idle = read_page(_statement(_chargeback(month=month, month_idle=100.0)))["charts"]["idle"]
    assert idle == {
        "Idle capacity": {
            "research": "30.00",
            "vision": "20.00",
            "Absorbed by reservations": "40.00",
            "Left idle": "10.00",
        }
    }


def test_llm_spend_per_team_foots_to_the_model_table() -> None:
    # Three teams with a third of a cent each way: per model the cells add to the table's spend.
    usage = {
        (team, model): TeamModelUsage(10.0 / 3, 10, 5, 1)
        for team in ("a", "b", "c")
        for model in ("m1", "m2")
    }
    chargeback = _chargeback(llm_usage=usage)
    page = _statement(chargeback)
    llm = read_page(page)["charts"]["llm"]
    assert set(llm) == {"m1", "m2"}
    for spend in llm.values():
        assert set(spend.values()) == {"3.33", "3.34"}
        assert sum(Decimal(v) for v in spend.values()) == Decimal("10.00")
    # The model table prints 10.00 for each, and the chart's cells add up to that.
    models = read_page(page)["tables"][2]
    assert [row[2] for row in models[1:]] == ["10.00", "10.00", "20.00"]


def test_upstream_names_are_escaped_everywhere() -> None:
    month = _ledger({(EVIL_TEAM, "gpu"): 5.0, ("research", "gpu"): 1.0})
    usage = {(EVIL_TEAM, EVIL_MODEL): TeamModelUsage(2.0, 1, 1, 1)}
    page = _statement(_chargeback(month=month, llm_usage=usage, budgets={}))
    # The page carries no script and no element of its own making from a name.
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    figures = read_page(page)
    assert figures["tables"][0][1][0] == EVIL_TEAM
    assert EVIL_TEAM in figures["charts"]["teams"]["GPU"]
    assert figures["charts"]["llm"] == {EVIL_MODEL: {EVIL_TEAM: "2.00"}}


def test_same_figures_render_the_same_bytes() -> None:
    # No random chart ids and no generator comment with the day it ran.
    assert _statement(_chargeback()) == _statement(_chargeback())


def test_no_borrowing_and_no_budgets_say_so() -> None:
    month = _ledger({("research", "gpu"): 5.0})
    page = _statement(_chargeback(month=month, budgets={}))
    assert "No quota was borrowed or lent this month." in page
    assert "No budgets are configured." in page
    # Nothing idle: no chart of where it went, a sentence instead.
    assert "No idle capacity this month." in page
    assert set(read_page(page)["charts"]) == {"teams"}


def test_render_statement_needs_cost_data() -> None:
    assert render_statement(_chargeback(month=None, hourly=None), _config()) is None
    page = render_statement(_chargeback(), _config())
    assert page is not None and page.startswith(b"<!DOCTYPE html>")


def test_the_workers_artefact_is_the_page_or_empty_before_cost_data() -> None:
    config = _config()
    page = statement_artefact(config, _chargeback())
    assert page.startswith(b"<!DOCTYPE html>")
    assert page == render_statement(_chargeback(), config)


def test_the_team_table_has_the_operating_columns_and_the_backlog_its_tables() -> None:
    found = backlog(
        [
            Entry("sandbox", "deployment:notebook", Placement(UNALLOCATED, "none"), 4.0),
            Entry("default", "cronjob:etl", Placement("research", "fallback", "part_of"), 2.5),
        ],
        ("label:team",),
    )
    chargeback = _chargeback(backlog=found, gpu_hours={"research": 1002.75})
    assert chargeback.month is not None
    report = with_operations(
        build_report(chargeback.month, "EUR", "2026-11", chargeback.budgets), chargeback
    )
    page = statement_html(build_statement(report, chargeback, _config()), NUMBERS)
    costs, teams, unallocated, fallback = read_page(page)["tables"]
    assert [row[0] for row in costs] == [row[0] for row in teams]
    assert teams[0][-5:] == [
        "GPU-hours",
        "Idle GPU-hours",
        "Occupancy (%)",
        "Guaranteed GPUs",
        "Tokens",
    ]
    research = next(row for row in teams if row[0] == "research")
    assert research[-5:] == ["1,002.75", "", "", "", ""]
    assert teams[-1][-5] == "1,002.75"
    assert unallocated[1] == ["sandbox", "deployment:notebook", "label:team", "4.00"]
    assert unallocated[-1] == ["Total", "", "", "4.00"]
    assert fallback[1] == ["default", "cronjob:etl", "research (part_of)", "2.50"]
    # A team's page has its row and its part of the backlog: the fallback row placed on it.
    statement = for_team(build_statement(report, chargeback, _config()), "research")
    costs, teams, fallback = read_page(page_of(statement))["tables"]
    assert [row[0] for row in costs[1:]] == [row[0] for row in teams[1:]] == ["research"]
    assert '<p class="label">GPU-hours</p><p class="value">1,002.75</p>' in page_of(statement)
    assert fallback[1:] == [
        ["default", "cronjob:etl", "research (part_of)", "2.50"],
        ["Total", "", "", "2.50"],
    ]


def page_of(statement: Statement) -> str:
    return statement_html(statement, NUMBERS)
