"""The text report's and the statement's numbers in the configured locale: money, counts,
prices per million tokens.

Babel formats with the Unicode CLDR's conventions (`7.400,98 €` in es-ES, `€7,400.98` in en-IE),
never in scientific notation. Without `report.locale`, the locale is the main language of the
time zone's country when that country pays in the currency (Europe/Madrid and EUR: es-ES),
else of the currency's own country (USD: en-US), else English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.numbers import format_currency, format_decimal, get_territory_currencies

from exporter.config.schema import Config

__all__ = ["Numbers", "statement_locale"]

# Prices per million tokens run from thousandths of a cent upwards: two to four decimals.
_PRICE = "#,##0.00##"
_AMOUNT = "#,##0.00"


def statement_locale(config: Config) -> Locale:
    """The configured locale, or the one the time zone and the currency suggest."""
    if config.report.locale is not None:
        return Locale.parse(config.report.locale, sep="-")
    zones: Mapping[str, str] = get_global("zone_territories")
    territory = zones.get(config.timezone)
    if territory and config.currency in get_territory_currencies(territory):
        return _of_territory(territory) or Locale("en")
    return _of_territory(config.currency[:2]) or Locale("en")


def _of_territory(territory: str) -> Locale | None:
    # CLDR's likely subtags: "und_ES" is es_ES, "und_US" en_US.
    try:
        locale = Locale.parse(f"und_{territory}")
    except (UnknownLocaleError, ValueError):
        return None
    return locale if locale.territory == territory else None


@dataclass(frozen=True)
class Numbers:
    """Formats figures for one statement: its locale and its currency."""

    locale: Locale
    currency: str

    @property
    def symbol(self) -> str:
        """The currency's symbol in the locale (`€`, `US$`)."""
        return str(self.locale.currency_symbols.get(self.currency, self.currency))

    def money(self, value: Decimal | float) -> str:
        """An amount with its currency, `7.400,98 €`."""
        return str(format_currency(Decimal(str(value)), self.currency, locale=self.locale))

    def amount(self, value: Decimal | float) -> str:
        """An amount to the cent, grouped, without the currency (tables say it once)."""
        return str(format_decimal(Decimal(str(value)), _AMOUNT, locale=self.locale))

    def count(self, value: int) -> str:
        """A whole number, grouped: `111.600.000`."""
        return str(format_decimal(value, "#,##0", locale=self.locale))

    def per_million(self, per_token: float) -> str:
        """A cost per token as the cost of a million tokens, never in scientific notation."""
        return str(format_decimal(Decimal(repr(per_token)) * 1_000_000, _PRICE, locale=self.locale))

    def one_decimal(self, value: float) -> str:
        """A figure to one decimal, rounded as `format(value, ".1f")` rounds it: `105,8`."""
        return str(format_decimal(Decimal(format(value, ".1f")), "#,##0.0", locale=self.locale))

    def percent(self, value: float) -> str:
        """A percentage with one decimal: `1,7 %`."""
        number = format_decimal(Decimal(repr(value)), "#,##0.0", locale=self.locale)
        return f"{number}\u00a0%"
