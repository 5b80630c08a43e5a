"""The statement's reconciliation: the bill, the largest unmatched lines, the true-up, in locale."""

from __future__ import annotations

import re
from dataclasses import replace

from babel import Locale

from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.reconciliation import reconciliation_html
from tests.conftest import FIXED_NOW
from tests.unit.finance.report.test_reconciliation import report_with_bills


def test_the_statement_shows_the_bill_its_unmatched_lines_and_the_true_up() -> None:
    numbers = Numbers(Locale.parse("es_ES"), "EUR")
    statement = Statement(report_with_bills(), FIXED_NOW, "UTC", (), (), (), (), {})
    page = "".join(reconciliation_html(statement, numbers))
    cells = re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", page)
    assert cells[cells.index("anthropic") : cells.index("anthropic") + 10] == [
        *("anthropic", "anthropic", "wrkspc_1", "llm", "USD", "0.8"),
        *("28,40", "18,40", "10,00", "1.5435"),
    ]
    assert cells[-5:] == ["claude-sonnet-4", "2026-02-02", "10,00", "0,00", "10,00"]
    assert "Trued up to the anthropic bill (invoice INV-2026-02): vision 10,00." in page


def test_no_bills_no_section() -> None:
    plain = Statement(
        replace(report_with_bills(), reconciliation=None), FIXED_NOW, "UTC", (), (), (), (), {}
    )
    assert reconciliation_html(plain, Numbers(Locale.parse("en_IE"), "EUR")) == []
