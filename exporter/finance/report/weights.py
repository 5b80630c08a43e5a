"""The report's completion weight per self-hosted model: configured, measured, applied, why a
measured weight asked for was not applied, and the engine time per token it was measured from.

Figures are the join's own (exporter.ledger.llm.weights). The time per token is in milliseconds
(a prompt token takes a fraction of one), so no figure needs scientific notation; text, the
statement and JSON give weights to two decimals and milliseconds to three. A closed month's
weights are measured over that month (the vLLM source reads it to its end), so they stay in
its report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from babel.numbers import format_decimal

from exporter.finance.report.figure_formats import TEXT, Format, Formats
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.text_tables import UnitTable, text_lines
from exporter.ledger.llm.weights import (
    IMPLAUSIBLE,
    INVALID,
    INVERTED_PHASES,
    NO_DATA,
    SOURCE_DOWN,
    TOO_FEW_REQUESTS,
    TOO_FEW_TOKENS,
    CompletionWeight,
)

__all__ = ["HEAD", "REASONS", "applied_words", "weight_json", "weight_table", "weight_text"]

_DECIMALS = 2  # as printed: weights to two decimals, milliseconds to three
_MS_DECIMALS = 3
_MS = 1000.0
HEAD = (
    *("model", "basis", "applied", "configured", "measured"),
    *("prefill ms per prompt token", "decode ms per completion token", "requests measured"),
)
# Why a measured weight asked for gave way to the configured one, in people's words.
REASONS = {
    SOURCE_DOWN: "vLLM's Prometheus not read",
    NO_DATA: "no finished request measured",
    TOO_FEW_REQUESTS: "too few requests measured",
    INVALID: "a phase measured no time or no tokens",
    TOO_FEW_TOKENS: "too few tokens measured",
    INVERTED_PHASES: "decode measured cheaper than prefill",
    IMPLAUSIBLE: "measured weight outside the plausible band",
}


def _r(value: float | None, digits: int = _DECIMALS) -> float | None:
    # Halves to even from the float's shortest repr, as the printed figure is rounded.
    if value is None:
        return None
    return float(Decimal(repr(value)).quantize(Decimal(10) ** -digits, ROUND_HALF_EVEN))


def weight_json(weights: Sequence[CompletionWeight]) -> list[dict[str, Any]]:
    """Every self-hosted model's weights, for the report's JSON (`llm_completion_weights`)."""
    out: list[dict[str, Any]] = []
    for w in weights:
        m = w.measured
        out.append(
            {
                "model": w.model,
                "asked": w.asked,
                "basis": w.basis,
                "fallback_reason": w.fallback,
                "configured": _r(w.configured),
                "measured": None if m is None else _r(m.weight),
                "applied": _r(w.applied),
                "prefill_ms_per_prompt_token": (
                    None if m is None else _r(m.prefill_per_token * _MS, _MS_DECIMALS)
                ),
                "decode_ms_per_completion_token": (
                    None if m is None else _r(m.decode_per_token * _MS, _MS_DECIMALS)
                ),
                "requests_measured": None if m is None else round(m.requests),
            }
        )
    return out


def applied_words(weight: CompletionWeight, word: Callable[[str], str] = str) -> str:
    """Which weight is applied, and why the configured one when the measured was asked for."""
    if weight.fallback is None:
        return word(weight.basis)
    return f"{word('configured')}: {REASONS.get(weight.fallback, weight.fallback)}"


def weight_table(weights: Sequence[CompletionWeight], f: Formats, ms: Format) -> UnitTable:
    """The weights as one printed table (`ms`: how milliseconds per token print)."""
    rows = []
    for w in weights:
        m = w.measured
        rows.append(
            (
                w.model,
                applied_words(w, f.word),
                f.plain(w.applied),
                f.plain(w.configured),
                f.plain(None if m is None else m.weight),
                ms(None if m is None else m.prefill_per_token * _MS),
                ms(None if m is None else m.decode_per_token * _MS),
                "" if m is None else f.count(round(m.requests)),
            )
        )
    title = "Completion weight per self-hosted model (prompt tokens a completion token is worth)"
    return UnitTable("llm_completion_weights", title, HEAD, tuple(rows), 2)


def weight_text(
    weights: Sequence[CompletionWeight], f: Formats = TEXT, numbers: Numbers | None = None
) -> list[str]:
    """The text report's weight table (nothing when no model is self-hosted)."""

    def ms(value: float | None) -> str:
        if value is None:
            return ""
        if numbers is None:
            return f"{value:,.3f}"
        return str(format_decimal(Decimal(repr(value)), "#,##0.000", locale=numbers.locale))

    return text_lines([weight_table(weights, f, ms)]) if weights else []
