"""What a team's cost is made of: the ledger's components, in the order the report prints them."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["HARDWARE", "LLM", "Component"]


class Component(StrEnum):
    """One component of a team's cost: a resource OpenCost charged, a policy's move, or LLM."""

    GPU = "gpu"
    CPU = "cpu"
    RAM = "ram"
    STORAGE = "storage"
    NETWORK = "network"
    OTHER = "other"
    IDLE_SHARE = "idle_share"
    BORROWED = "borrowed"
    LENT = "lent"
    SHARED = "shared"
    LLM_SERVING = "llm_serving"
    LLM_EXTERNAL = "llm_external"
    # A closed month's difference to the invoices it is trued up to (exporter.ledger.reconcile).
    TRUE_UP = "true_up"


# The components LiteLLM's spend and the serving cost moved by tokens make; the rest is hardware.
LLM: tuple[Component, ...] = (Component.LLM_SERVING, Component.LLM_EXTERNAL)
HARDWARE: tuple[Component, ...] = tuple(c for c in Component if c not in LLM)
