"""The statement's completion-weight table, in the statement's locale (never scientific notation).

The weights are facts of the cluster, as the GPU prices are: a team's statement shows them too,
since they say how the self-hosted models' cost was split over the teams that sent tokens.
"""

from __future__ import annotations

from decimal import Decimal

from babel.numbers import format_decimal

from exporter.finance.report.numbers import Numbers
from exporter.finance.report.weights import weight_table
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.units import statement_formats, table_html

__all__ = ["weight_tables_html"]

_MS = "#,##0.000"


def weight_tables_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The weight table of a statement, as HTML (nothing when no model is self-hosted)."""
    weights = statement.report.weights
    if not weights:
        return []

    def ms(value: float | None) -> str:
        if value is None:
            return ""
        return str(format_decimal(Decimal(repr(value)), _MS, locale=numbers.locale))

    table = weight_table(weights, statement_formats(numbers), ms)
    return [table_html(table.head, table.rows, table.numeric_from, table.title)]
