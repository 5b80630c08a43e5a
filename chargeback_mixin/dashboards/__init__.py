"""The Grafana dashboards, one module each, built with grafana-foundation-sdk."""

from __future__ import annotations

import json
from collections.abc import Callable

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards import (
    dimensions,
    idle,
    llm,
    overview,
    queues,
    quota,
    reconciliation,
    team,
)

__all__ = ["DASHBOARDS", "dashboard_json"]

# File name (without .json) -> builder. The uid is the config's prefix + the same slug.
DASHBOARDS: dict[str, Callable[[MixinConfig], Dashboard]] = {
    "chargeback-overview": overview.build,
    "chargeback-team": team.build,
    "chargeback-idle-waste": idle.build,
    "chargeback-quota-borrowing": quota.build,
    "chargeback-queues-cost": queues.build,
    "chargeback-llm": llm.build,
    "chargeback-dimensions": dimensions.build,
    "chargeback-reconciliation": reconciliation.build,
}


def dashboard_json(d: Dashboard) -> str:
    """The dashboard as committed: sorted keys, two-space indent, trailing newline."""
    return json.dumps(d, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
