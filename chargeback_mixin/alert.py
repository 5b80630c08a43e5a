"""One alerting rule before rendering, and how its texts name the cluster and a share."""

from __future__ import annotations

from dataclasses import dataclass

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.rules import Rule

__all__ = ["IN_CLUSTER", "Alert", "pct"]

# Where a description names the alert's cluster; empty when the series have no cluster label,
# so single-cluster texts read as before.
IN_CLUSTER = "<in-cluster>"


@dataclass(frozen=True)
class Alert:
    """One alerting rule before rendering."""

    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str

    def render(self, c: MixinConfig) -> Rule:
        """The rule as Prometheus reads it."""
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.for_,
            "labels": {"severity": self.severity},
            "annotations": {
                "summary": self.summary,
                "description": self.description.replace(IN_CLUSTER, _in_cluster(c)),
                "runbook_url": c.runbook(self.name),
            },
        }


def _in_cluster(c: MixinConfig) -> str:
    return "{{ with $labels." + c.cluster_label + " }} in cluster {{ . }}{{ end }}"


def pct(ratio: float) -> str:
    """A ratio as a percentage for a text: 0.8 -> 80%."""
    return f"{ratio * 100:g}%"
