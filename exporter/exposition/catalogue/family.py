"""What a metric family is: its name, Prometheus type, help, labels, unit and the sources its
figures are built from."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BACKGROUND_NOTE", "INFO", "PREFIX", "C", "Family", "G", "Kind", "family"]

PREFIX = "chargeback_"
BACKGROUND_NOTE = " Refreshed in the background, not at scrape time."


class Kind(StrEnum):
    """Prometheus metric type of a family."""

    GAUGE = "gauge"
    COUNTER = "counter"
    INFO = "info"


@dataclass(frozen=True)
class Family:
    """One metric family: its exposed name, type, help, label names, unit and source."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...]
    unit: str
    source: str  # which upstream feeds it; "exporter" for self-metrics
    # The other upstreams every figure of the family is built from (a cost per token: the
    # serving cost from OpenCost as well as the tokens from LiteLLM).
    inputs: tuple[str, ...] = ()

    @property
    def base(self) -> str:
        """The name without the `chargeback_` prefix."""
        return self.name.removeprefix(PREFIX)

    @property
    def exposed_name(self) -> str:
        """The name as it appears in the exposition (counters gain `_total`, info `_info`)."""
        if self.kind is Kind.COUNTER:
            return f"{self.name}_total"
        if self.kind is Kind.INFO:
            return f"{self.name}_info"
        return self.name


def family(
    name: str,
    kind: Kind,
    help_: str,
    labels: tuple[str, ...],
    unit: str,
    source: str,
    inputs: tuple[str, ...] = (),
) -> Family:
    """A family named `chargeback_<name>`."""
    return Family(PREFIX + name, kind, help_, labels, unit, source, inputs)


G, C, INFO = Kind.GAUGE, Kind.COUNTER, Kind.INFO
