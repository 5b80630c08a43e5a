"""The month joined again under a what-if: a changed config and snapshots, the same join (pure).

Nothing is read again: the snapshots the month's report joined are changed in memory (a queue's
quota, a serving namespace's hours) and the config is copied with the settings changed, then
validated again so that every rule of a config file still holds (`idle_policy: reservation`
still needs Kueue). The join is the report's own, so before and after differ only by the change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from exporter.config.loader import issues_from_validation
from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.ledger.what_if.settings import WhatIf, WhatIfError
from exporter.ledger.what_if.snapshots import what_if_snapshots
from exporter.sources.table import Snapshots

__all__ = ["Rerun", "rerun", "what_if_config"]


@dataclass(frozen=True)
class Rerun:
    """The month joined under the what-if, and what the report should say of how."""

    after: Chargeback
    config: Config
    notes: tuple[str, ...]


def rerun(what_if: WhatIf, config: Config, latest: Snapshots, before: Chargeback) -> Rerun:
    """Join the month again with the what-if's settings; WhatIfError for one that cannot hold."""
    changed = what_if_config(what_if, config)
    if changed.idle_policy.needs_kueue and latest.kueue is None:
        raise WhatIfError(
            f"--what-if idle_policy: {changed.idle_policy} charges Kueue quota, and the month "
            "has no Kueue read"
        )
    snapshots, notes = what_if_snapshots(what_if, changed, latest, before)
    after = join(changed, Attributor(changed), snapshots, before.reading)
    return Rerun(after, changed, notes)


def what_if_config(what_if: WhatIf, config: Config) -> Config:
    """The config with the what-if's policy and prices, validated as a config file is."""
    update: dict[str, Any] = {}
    if what_if.idle_policy is not None:
        update["idle_policy"] = what_if.idle_policy
    if what_if.gpu_prices:
        update["gpu_prices"] = {**config.gpu_prices, **what_if.gpu_prices}
    if what_if.gpu_flavor_prices:
        update["gpu_flavor_prices"] = {**config.gpu_flavor_prices, **what_if.gpu_flavor_prices}
    if not update:
        return config
    try:
        return Config.model_validate(config.model_copy(update=update).model_dump())
    except ValidationError as exc:
        issues = issues_from_validation(exc, {})
        said = "; ".join(f"{i.key}: {i.message}" if i.key else i.message for i in issues)
        given = ", ".join(what_if.given)
        raise WhatIfError(f"--what-if {given}: the config would not hold: {said}") from None
