"""The metric catalogue: every family the exporter serves, declared once as data in its area."""

from __future__ import annotations

from types import ModuleType

from exporter.exposition.catalogue import (
    advice,
    bills,
    calendar,
    cluster,
    costs,
    dimensions,
    forecast,
    gpus,
    health,
    llm,
    queues,
    quota,
    unit_economics,
)
from exporter.exposition.catalogue.family import Family

__all__ = ["AREAS", "CATALOGUE", "markdown_table"]

# The areas in exposition order; within an area, families come in the order they are declared.
AREAS: tuple[ModuleType, ...] = (
    costs,
    cluster,
    dimensions,
    calendar,
    forecast,
    gpus,
    quota,
    queues,
    llm,
    unit_economics,
    advice,
    bills,
    health,
)


def _declared(area: ModuleType) -> tuple[Family, ...]:
    # A module's namespace keeps definition order, so a family is named only where it is declared.
    return tuple(value for value in vars(area).values() if isinstance(value, Family))


# Every family, in exposition order: the renderer, the docs/metrics.md table, the rules lint and
# the dashboards lint read this tuple.
CATALOGUE: tuple[Family, ...] = tuple(f for area in AREAS for f in _declared(area))


def markdown_table() -> str:
    """The catalogue as the metric table of docs/metrics.md (a test keeps the page in step)."""
    rows = ["| metric | type | labels | unit | source | meaning |", "|---|---|---|---|---|---|"]
    for fam in CATALOGUE:
        labels = ", ".join(fam.labels) or "-"
        unit = fam.unit or "-"
        rows.append(
            f"| `{fam.exposed_name}` | {fam.kind.value} | {labels} | {unit} | {fam.source} "
            f"| {fam.help} |"
        )
    return "\n".join(rows) + "\n"
