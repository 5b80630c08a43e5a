"""How FOCUS names each cost component: its service, its meter, and whether it can be Usage.

A component with a meter is consumption the upstream measured: GPU-hours and core-hours,
memory and volume GiB-hours, GiB sent, tokens. Its rows are `Usage` when they measured
something and charge no less than zero. Every other row moves money rather than measuring
consumption (idle capacity, quota borrowed and lent, a self-hosted model's serving cost moved
onto the teams that sent it tokens, shared namespaces spread by rule, a charge the upstream
made without a quantity, a refund): FOCUS 1.2 calls those `Adjustment` (ChargeCategory), and
they carry no quantity (ConsumedQuantity: null when ChargeCategory is not "Usage").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from exporter.ledger.costs.components import Component

__all__ = ["GIB", "SERVICES", "Meter", "Service", "service"]

GIB = Decimal(2**30)


@dataclass(frozen=True)
class Meter:
    """What a component's quantity counts, as FOCUS 1.2 Unit Format writes it, and the divisor
    from the upstream's figure (bytes to GiB) to that unit."""

    unit: str
    per: Decimal = Decimal(1)


@dataclass(frozen=True)
class Service:
    """How FOCUS names what one component of the ledger charges for."""

    name: str
    category: str
    subcategory: str
    description: str
    meter: Meter | None = None  # None: the component measures no consumption


_CONTAINERS = ("Compute", "Containers")
_AI = ("AI and Machine Learning", "Generative AI")

SERVICES: Mapping[str, Service] = {
    Component.GPU: Service("GPU Compute", *_CONTAINERS, "GPU time", Meter("GPU-Hours")),
    Component.CPU: Service("CPU Compute", *_CONTAINERS, "CPU allocation", Meter("Core-Hours")),
    Component.RAM: Service("Memory", *_CONTAINERS, "Memory allocation", Meter("GiB-Hours", GIB)),
    Component.STORAGE: Service(
        "Persistent Volumes",
        "Storage",
        "Block Storage",
        "Persistent volume allocation",
        Meter("GiB-Hours", GIB),
    ),
    # OpenCost prices network by egress, so the bytes sent are what was consumed.
    Component.NETWORK: Service(
        "Network Egress",
        "Networking",
        "Network Connectivity",
        "Network transfer",
        Meter("GiB", GIB),
    ),
    # Load balancers and costs OpenCost attaches from outside the cluster: no quantity.
    Component.OTHER: Service("Cluster Services", "Compute", "Other (Compute)", "Other costs"),
    Component.IDLE_SHARE: Service("Idle Capacity", *_CONTAINERS, "Share of idle capacity"),
    Component.BORROWED: Service("GPU Quota", *_CONTAINERS, "GPU quota borrowed"),
    Component.LENT: Service("GPU Quota", *_CONTAINERS, "GPU quota lent (credit)"),
    Component.SHARED: Service(
        "Shared Namespaces", *_CONTAINERS, "Shared namespaces, spread by rule"
    ),
    Component.LLM_SERVING: Service(
        "Self-hosted LLM Serving", *_AI, "Self-hosted model serving, moved by tokens sent"
    ),
    Component.LLM_EXTERNAL: Service(
        "External LLM APIs",
        *_AI,
        "External model spend through the LiteLLM proxy",
        Meter("Tokens"),
    ),
    # No quantity, so an Adjustment row: the invoice's difference to what was recorded.
    Component.TRUE_UP: Service(
        "Invoice True-up", "Other", "Other (Other)", "True-up to the provider's invoice"
    ),
}
# A component added to the ledger before this table learns it: an Adjustment, said plainly.
_UNKNOWN = Service("Cluster Services", "Compute", "Other (Compute)", "Other costs")


def service(component: str) -> Service:
    """The FOCUS naming of a component (a generic one for a component not in the table)."""
    return SERVICES.get(component, _UNKNOWN)
