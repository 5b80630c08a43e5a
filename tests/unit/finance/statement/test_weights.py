"""The statement's completion-weight table: the hand-worked weights in a locale, in words."""

from __future__ import annotations

import re
from dataclasses import replace

from babel import Locale

from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.weights import weight_tables_html
from tests.conftest import FIXED_NOW
from tests.unit.finance.report.test_weights import report


def _cells(page: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", page)


def test_the_statement_prints_them_in_its_locale() -> None:
    numbers = Numbers(Locale.parse("es_ES"), "EUR")
    statement = Statement(report(), FIXED_NOW, "UTC", (), (), (), (), {})
    page = "".join(weight_tables_html(statement, numbers))
    cells = _cells(page)
    # llama: w = 16 ms / 0.2 ms = 80 over 1.200 requests; mistral's 75 gives way to 3.
    assert cells[cells.index("llama-70b") : cells.index("llama-70b") + 8] == [
        *("llama-70b", "Measured", "80,00", "3,00", "80,00", "0,200", "16,000", "1.200"),
    ]
    assert "Configured: too few requests measured" in cells and "7,500" in cells
    assert not any(re.search(r"\de[-+]?\d", c) for c in cells)
    assert "too_few_requests" not in page
    assert '<th scope="col">Prefill ms per prompt token</th>' in page


def test_a_teams_statement_shows_them_too_and_none_without_a_self_hosted_model() -> None:
    numbers = Numbers(Locale.parse("en_IE"), "EUR")
    mine = Statement(report(), FIXED_NOW, "UTC", (), (), (), (), {}, team="search")
    assert "80.00" in "".join(weight_tables_html(mine, numbers))
    none = Statement(replace(report(), weights=()), FIXED_NOW, "UTC", (), (), (), (), {})
    assert weight_tables_html(none, numbers) == []
