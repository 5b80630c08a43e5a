"""The statement's numbers: the locale from config, or from the zone and currency; no exponent."""

from __future__ import annotations

import pytest

from exporter.config.schema import Config
from exporter.finance.report.numbers import Numbers, statement_locale


@pytest.mark.parametrize(
    ("settings", "locale"),
    [
        ({"timezone": "Europe/Madrid", "currency": "EUR"}, "es_ES"),
        ({"timezone": "Europe/Berlin", "currency": "EUR"}, "de_DE"),
        ({"timezone": "UTC", "currency": "USD"}, "en_US"),
        ({"timezone": "Europe/London", "currency": "GBP"}, "en_GB"),
        # The zone's country pays in another currency, and EUR names no country: English.
        ({"timezone": "America/New_York", "currency": "EUR"}, "en"),
        ({"timezone": "Europe/Madrid", "currency": "EUR", "report": {"locale": "en-IE"}}, "en_IE"),
    ],
)
def test_the_locale_comes_from_config_else_zone_and_currency(
    settings: dict[str, object], locale: str
) -> None:
    assert str(statement_locale(Config.model_validate(settings))) == locale


def test_spanish_euros_as_finance_writes_them() -> None:
    numbers = Numbers(statement_locale(Config.model_validate({"timezone": "Europe/Madrid"})), "EUR")
    assert numbers.money(7400.98) == "7.400,98\u00a0€"
    assert numbers.money(-1440.23) == "-1.440,23\u00a0€"
    assert numbers.count(111_600_000) == "111.600.000"
    assert numbers.amount(0) == "0,00"
    assert numbers.percent(1.7) == "1,7\u00a0%"


def test_prices_per_million_tokens_never_use_an_exponent() -> None:
    numbers = Numbers(statement_locale(Config.model_validate({"currency": "USD"})), "USD")
    assert numbers.per_million(2e-07) == "0.20"
    assert numbers.per_million(2.1538461538e-06) == "2.1538"
    assert numbers.per_million(1.5e-11) == "0.00"
    assert numbers.per_million(0.03) == "30,000.00"
