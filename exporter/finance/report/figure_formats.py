"""How a report table's figures print: money, a small price, a count, a ratio, a plain figure;
plainly (TEXT) or in the configured locale (local_formats)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from babel.numbers import format_decimal

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers

__all__ = ["TEXT", "Format", "Formats", "local_formats"]

Format = Callable[[float | None], str]


@dataclass(frozen=True)
class Formats:
    """How each kind of figure prints: money, a small price, a count, a ratio, a plain figure."""

    money: Format
    fine: Format  # a request's cost: four decimals
    count: Callable[[int], str]
    ratio: Format  # a percentage
    plain: Format  # watts, kWh, grams: two decimals
    team: Callable[[str], str] = str  # a team's name (the statement names reserved rows)
    word: Callable[[str], str] = str  # an identifier: a kind, a source, a power basis


def _text(pattern: str) -> Format:
    return lambda v: "" if v is None else format(v, pattern)


TEXT = Formats(
    money=_text(",.2f"),
    fine=_text(",.4f"),
    count=lambda n: f"{n:,}",
    ratio=lambda v: "" if v is None else f"{100 * v:,.1f} %",
    plain=_text(",.2f"),
)


def local_formats(numbers: Numbers) -> Formats:
    """The figures in the configured locale, identifiers in people's words (the text table and
    the statement print them so)."""

    def pattern(text: str) -> Format:
        def formatted(value: float | None) -> str:
            if value is None:
                return ""
            return str(format_decimal(Decimal(repr(value)), text, locale=numbers.locale))

        return formatted

    return Formats(
        money=lambda v: "" if v is None else numbers.amount(round(Decimal(repr(v)), 2)),
        fine=pattern("#,##0.0000"),
        count=numbers.count,
        ratio=lambda v: "" if v is None else numbers.percent(100 * v),
        plain=pattern("#,##0.00"),
        team=labels.team,
        word=labels.word,
    )
