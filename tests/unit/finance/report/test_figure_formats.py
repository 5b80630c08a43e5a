"""Figures print plainly (TEXT) or in the locale, never in scientific notation; None is blank."""

from __future__ import annotations

from babel import Locale

from exporter.finance.report.figure_formats import TEXT, local_formats
from exporter.finance.report.numbers import Numbers


def test_plain_text_prints_each_kind_of_figure_to_its_digits() -> None:
    assert TEXT.money(1234.5) == "1,234.50"
    assert TEXT.fine(0.00164) == "0.0016"
    assert TEXT.count(7_200_000) == "7,200,000"
    assert TEXT.ratio(0.178) == "17.8 %"
    assert TEXT.plain(1e-7) == "0.00"
    assert TEXT.money(None) == TEXT.ratio(None) == ""


def test_the_locale_prints_the_same_figures_its_own_way() -> None:
    f = local_formats(Numbers(Locale.parse("es_ES"), "EUR"))
    assert f.money(7400.98) == "7.400,98"
    assert f.fine(0.0016) == "0,0016"
    assert f.plain(2e-7) == "0,00"
    assert f.count(111_600_000) == "111.600.000"
    assert f.money(None) == f.fine(None) == ""
