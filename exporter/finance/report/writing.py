"""How the report's tables write their cells: CSV's identifiers and plain figures for tools,
or people's labels and the configured locale for the text table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.teams import USAGE_COLUMNS, Measure, Write, plain
from exporter.ledger.attribution import OTHER

__all__ = ["CSV", "Cells", "people"]

# Column heads in people's words (components and operating columns come from their labels).
HEADS = {
    "team": "Team",
    "total": "Total",
    "budget_gpu": "GPU budget",
    "budget_llm": "LLM budget",
    "model": "Model",
    "kind": "Kind",
    "spend": "Spend",
    "prompt_tokens": "Prompt tokens",
    "completion_tokens": "Completion tokens",
    "requests": "Requests",
    "declared_per_token": "Declared",
    "measured_per_token": "Measured",
    "recommended_input_cost_per_token": "Rec. input",
    "recommended_output_cost_per_token": "Rec. output",
    "namespace": "Namespace",
    "workload": "Workload",
    "keys": "Keys",
    "cost": "Cost",
    "action": "Advice",
    "saving_per_month": "Saves a month",
    "gpus": "GPUs freed",
    "framebuffer_p95_mib": "Memory p95 (MiB)",
    "framebuffer_max_mib": "Memory peak (MiB)",
    "activity_p95_percent": "Activity p95 %",
    "activity_max_percent": "Activity peak %",
    "idle_percent": "Idle %",
    "samples": "Samples",
    "coverage_percent": "Window seen %",
    "reason": "Reason",
    "detail": "Why",
    "forecast_low": "Low",
    "forecast_mid": "Month end",
    "forecast_high": "High",
    **{c.name: c.label for c in USAGE_COLUMNS},
}


@dataclass(frozen=True)
class Cells:
    """How one format writes a table's cells."""

    money: Callable[[Decimal], str]
    usage: Write  # an operating figure
    count: Callable[[int], str]
    price: Callable[[float], str]  # a price per token (people read it per million)
    name: Callable[[str, str], str]  # a row's name: (what a row is, its value)
    head: Callable[[str], str]  # a column's name
    word: Callable[[str], str]  # an identifier in a cell: a kind of model or of backlog row
    total: str  # the total row's name


def _plain_price(value: float) -> str:
    return format(value, ".3e")


CSV = Cells(
    money=lambda v: format(v, ".2f"),
    usage=plain,
    count=str,
    price=_plain_price,
    name=lambda by, value: value,
    head=str,
    word=str,
    total="total",
)


def people(numbers: Numbers) -> Cells:
    """The text table's cells: labels rather than identifiers, figures in the locale."""

    def usage(measure: Measure, value: float) -> str:
        if measure is Measure.PERCENT:
            return numbers.one_decimal(value)
        if measure is Measure.COUNT:
            return numbers.count(int(value))
        return numbers.amount(value)

    def name(by: str, value: str) -> str:
        # A dimension's folded values are values, not teams.
        return "Other values" if by != "team" and value == OTHER else labels.team(value)

    def head(column: str) -> str:
        return HEADS.get(column) or labels.component(column)

    return Cells(
        money=numbers.amount,
        usage=usage,
        count=numbers.count,
        price=numbers.per_million,
        name=name,
        head=head,
        word=labels.word,
        total="Total",
    )
