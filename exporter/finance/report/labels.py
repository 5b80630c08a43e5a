"""What the text report and the statement call things: people's words for the identifiers.

The identifiers (`__idle__`, `idle_share`, `budget_gpu`) stay in the CSV, the JSON and the
FOCUS export, where tools read them; the text table and the page say what they mean.
"""

from __future__ import annotations

from collections.abc import Mapping

from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.costs.components import Component

__all__ = ["COMPONENTS", "KINDS", "WORDS", "component", "kind", "team", "word"]

TEAMS: Mapping[str, str] = {
    IDLE: "Idle capacity",
    UNALLOCATED: "Unallocated",
    OTHER: "Other teams",
}
COMPONENTS: Mapping[str, str] = {
    Component.GPU: "GPU",
    Component.CPU: "CPU",
    Component.RAM: "Memory",
    Component.STORAGE: "Storage",
    Component.NETWORK: "Network",
    Component.OTHER: "Other services",
    Component.IDLE_SHARE: "Share of idle",
    Component.BORROWED: "Quota borrowed",
    Component.LENT: "Quota lent",
    Component.SHARED: "Shared namespaces",
    Component.LLM_SERVING: "Self-hosted LLMs",
    Component.LLM_EXTERNAL: "External LLMs",
    Component.TRUE_UP: "True-up to invoices",
}
KINDS: Mapping[str, str] = {
    "external": "External",
    "self_hosted": "Self-hosted",
    "undeclared": "Not declared",
    "gpu": "GPU",
    "llm": "LLM",
}


# The unit tables' identifiers in people's words (kinds of model come from KINDS).
WORDS: Mapping[str, str] = {
    "model": "GPU model",
    "flavor": "Kueue flavor",
    "config": "Configured price",
    "price_build": "Built from its parts",
    "opencost_charge": "OpenCost's charge",
    "opencost_assets": "OpenCost's node assets",
    "config_models": "Its models' configured prices",
    "cluster_average": "Cluster average",
    "flavor_price": "Its flavor's price",
    "nameplate": "Nameplate",
    "measured": "Measured",
    "list price": "List price",
    "configured": "Configured",
    "unallocated": "Unallocated",
    "fallback": "Fallback key",
}


def word(name: str) -> str:
    """An identifier of a unit table (a price's source, a power basis, a kind) in words."""
    return WORDS.get(name, kind(name))


def team(name: str) -> str:
    """A team as people call it: its own name, or what a reserved row stands for."""
    return TEAMS.get(name, name)


def component(name: str) -> str:
    """A cost component's label (an unknown one as it is written)."""
    return COMPONENTS.get(name, name.replace("_", " ").capitalize())


def kind(name: str) -> str:
    """A model's kind or a budget's kind."""
    return KINDS.get(name, name)
