"""The statement's charts stay readable: axes above the largest value, no empty category, no
value label that overprints or says nothing."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from exporter.finance.statement.plotting import axis_ticks, label_fits
from exporter.ledger.attribution import IDLE, UNALLOCATED
from exporter.ledger.llm import TeamModelUsage
from tests.support.statement_dom import read_page
from tests.unit.finance.statement.test_figures import _chargeback, _ledger, _statement


def test_the_axis_ends_above_the_tallest_bar() -> None:
    # The two charts: LLM spend topped at 220 under 235.44, budgets at 4,000 under 4,972.70.
    assert axis_ticks(0, 235.44)[-1] == 250
    assert axis_ticks(0, 4972.70)[-1] == 5000
    assert axis_ticks(-701.68, 2479.57)[0] == -1000
    assert axis_ticks(0, 2000)[-1] > 2000  # a bar exactly on a tick still has room above


@given(st.floats(-1e6, 0), st.floats(0, 1e6))
def test_ticks_always_span_every_value(low: float, high: float) -> None:
    ticks = axis_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] > high
    assert ticks == sorted(ticks) and 2 <= len(ticks) <= 16


def test_a_label_fits_only_inside_a_bar_that_holds_it() -> None:
    assert label_fits("978,60", 145.0, 82.0, 10)
    assert not label_fits("6,99", 145.0, 0.6, 10)  # a thin stacked segment
    assert not label_fits("4.972,70", 30.0, 200.0, 10)  # a narrow bar
    assert not label_fits("0,00", 0.0, 0.0, 10)  # a bar not drawn


def test_no_zero_label_no_empty_category_no_empty_series() -> None:
    month = _ledger(
        {
            ("research", "gpu"): 900.0,
            ("research", "network"): 0.4,  # a sliver: drawn, not labelled
            ("vision", "gpu"): 300.0,
            (IDLE, "gpu"): 0.0,
            (UNALLOCATED, "cpu"): 20.0,
        }
    )
    usage = {("research", "m1"): TeamModelUsage(235.44, 10, 5, 1)}
    page = _statement(_chargeback(month=month, llm_usage=usage, budgets={}))
    values = re.findall(r'<text[^>]*class="value"[^>]*>([^<]*)</text>', page)
    assert values and all(v not in ("", "0.00", "0.40") for v in values)
    teams = read_page(page)["charts"]["teams"]
    # Idle capacity has nothing to draw (everything was spread): it is no category.
    assert all("Idle capacity" not in bars for bars in teams.values())
    # An all-zero idle chart is a sentence, not a bar of "Left idle 0.00".
    assert "Left idle" not in page
    # The LLM chart's axis ends above its one bar of 235.44.
    svg = re.search(r'<svg[^>]*id="chart-llm".*?</svg>', page, re.S)
    assert svg is not None
    axis = svg.group(0).split('<g class="axis y always_show">')[1].split('<g class="axis x')[0]
    ticks = [float(t.replace(",", "")) for t in re.findall(r"<title>([-\d.,]+)</title>", axis)]
    assert max(ticks) == 250.0 and min(ticks) == 0.0


def test_the_llm_card_counts_what_was_billed() -> None:
    # gpt-4o billed 10.00; the self-hosted m2's LiteLLM price (7.00) is internal: its GPU
    # cost is moved onto the senders, a wash in the cost table's Self-hosted LLMs column.
    month = _ledger(
        {
            ("research", "gpu"): 50.0,
            ("research", "llm_external"): 10.0,
            ("research", "llm_serving"): 5.0,
            ("search", "llm_serving"): -5.0,
        }
    )
    usage = {
        ("research", "gpt-4o"): TeamModelUsage(10.0, 100, 10, 1),
        ("research", "m2"): TeamModelUsage(7.0, 100, 10, 1),
    }
    page = _statement(_chargeback(month=month, llm_usage=usage, budgets={}))
    card = re.search(r'External LLMs</p><p class="value">([^<]*)</p>', page)
    assert card is not None and card.group(1) == "€10.00"
    costs = read_page(page)["tables"][0]
    column = costs[0].index("External LLMs")
    assert costs[-1][column] == "10.00"
    assert "€17.00" not in page
    # No model has a declared or measured price here: nothing per weighted token to explain.
    assert "per weighted token" not in page
