"""What a bill says, line by line: the shared shape of every bill source's records.

A bill source (a cloud provider's FOCUS cost export, OpenAI's organization costs, Anthropic's
cost report) reads its upstream and answers with these lines, validated where they are parsed;
the ledger's reconciliation (exporter.ledger.reconcile) matches them against what the gateway
recorded and what OpenCost charged. Amounts stay in the bill's own currency: converting them is
the reconciliation's job, at the configured rate, which it states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

__all__ = ["BillKind", "BillSnapshot", "BilledLine"]


class BillKind(StrEnum):
    """What a bill charges for: the LLM gateway's providers or the cluster's nodes."""

    LLM = "llm"
    CLUSTER = "cluster"


@dataclass(frozen=True, slots=True, kw_only=True)
class BilledLine:
    """One charge of one UTC day, as the provider billed it."""

    source: str  # the configured bill source's name (its `bills.<name>` key)
    provider: str  # who billed: `openai`, `anthropic`, or a FOCUS ProviderName lower-cased
    kind: BillKind
    day: date  # the UTC day charged (FOCUS ChargePeriodStart; the API's bucket start)
    amount: float  # in `currency`, finite; credits are negative only where the bill says so
    currency: str  # ISO 4217, upper case, as billed
    model: str | None = None  # LLM: the model billed, as the provider names it
    scope: str | None = None  # LLM: project or workspace id; cluster: None
    resource_id: str | None = None  # cluster: the provider's resource id (a node's instance)
    invoice: str | None = None  # FOCUS InvoiceId where the bill carries one
    description: str = ""  # the bill's own words for the line (line item, cost type)


@dataclass(frozen=True, kw_only=True)
class BillSnapshot:
    """One bill source's read of a month: its lines and the UTC days it has billed so far.

    `days_billed` is what the provider has closed: a day is in it once the bill holds it whole
    (the FOCUS export's periods, the API's buckets that ended), so a reconciliation never calls
    a day unmatched that the bill simply has not reached yet.
    """

    source: str
    kind: BillKind
    lines: tuple[BilledLine, ...]
    days_billed: frozenset[date] = field(default_factory=frozenset)
    dropped: int = 0  # records refused where parsed (also counted by the source's metrics)
