"""The statement's unit-economics tables: the hand-worked example in a locale, a team's own rows."""

from __future__ import annotations

import re

from babel import Locale

from exporter.finance.report.numbers import Numbers
from exporter.finance.report.units import for_team
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.units import unit_tables_html
from tests.conftest import FIXED_NOW
from tests.unit.finance.report.test_units import UNITS, _report


def test_the_statement_prints_them_in_its_locale() -> None:
    numbers = Numbers(Locale.parse("es_ES"), "EUR")
    statement = Statement(_report(), FIXED_NOW, "UTC", (), (), (), (), {})
    page = "".join(unit_tables_html(statement, numbers))
    cells = re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", page)
    assert "5,61" in cells and "1,4024" in cells and "0,0016" in cells
    assert "7.200.000" in cells and "17,8\u00a0%" in cells
    assert not any(re.search(r"\de[-+]?\d", c) for c in cells)
    # Identifiers in people's words.
    assert "Built from its parts" in cells and "GPU model" in cells and "Self-hosted" in cells
    assert "price_build" not in page and "self_hosted" not in page
    assert '<th scope="col">Per million</th>' in page
    # The draw of one instant is not the month's: the monthly statement leaves it out.
    assert "when the report ran" not in page and '<th scope="col">kWh</th>' not in page


def test_a_teams_statement_shows_only_its_own_rows() -> None:
    mine = for_team(UNITS, "vision")
    assert [t.team for t in mine.teams] == ["vision"]
    assert mine.energy == () and mine.alternatives == () and mine.models == ()
    statement = Statement(_report(), FIXED_NOW, "UTC", (), (), (), (), {}, team="vision")
    page = "".join(unit_tables_html(statement, Numbers(Locale.parse("en_IE"), "EUR")))
    assert "research" not in page and "5.42" in page
