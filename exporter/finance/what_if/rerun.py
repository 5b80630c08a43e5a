"""The month joined again under a what-if: a changed config and snapshots, the same join (pure).

Nothing is read again: the snapshots the month's report joined are changed in memory (a queue's
quota, a serving namespace's hours) and the config is copied with the settings changed, then
validated again so that every rule of a config file still holds (`idle_policy: reservation`
still needs Kueue). The join is the report's own, so before and after differ only by the change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from exporter.config.loader import issues_from_validation
from exporter.config.schema import Config
from exporter.finance.what_if.keys import WhatIf, WhatIfError
from exporter.finance.what_if.throughput import Throughput, measured_throughput, served_faster
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.opencost.source import OpenCostSnapshot
from exporter.sources.table import Snapshots

__all__ = ["Rerun", "rerun", "what_if_config", "what_if_snapshots"]


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


def what_if_snapshots(
    what_if: WhatIf, config: Config, latest: Snapshots, before: Chargeback
) -> tuple[Snapshots, tuple[str, ...]]:
    """The month's snapshots with the what-if's quotas and throughputs; notes on each change."""
    notes: list[str] = []
    if what_if.quotas and latest.kueue is not None:
        latest = replace(latest, kueue=_quotas(latest.kueue, what_if))
        for (queue, flavor), gpus in sorted(what_if.quotas.items()):
            notes.append(f"quota.{queue}: {gpus:g} GPUs of nominal quota in flavor {flavor}")
    if what_if.tokens_per_second and latest.opencost is not None:
        opencost, said = _throughputs(what_if, config, latest.opencost, before)
        latest = replace(latest, opencost=opencost)
        notes += said
    return latest, tuple(notes)


def _quotas(kueue: KueueSnapshot, what_if: WhatIf) -> KueueSnapshot:
    """Each asked queue's GPU quota at its new nominal; a lending limit above it falls with it."""
    queues = []
    for q in kueue.queues:
        gpus = what_if.quotas.get((q.cluster_queue, q.flavor))
        if gpus is None or q.resource not in GPU_RESOURCES:
            queues.append(q)
            continue
        queues.append(replace(q, nominal=gpus, lending_limit=min(q.lending_limit, gpus)))
    return replace(kueue, queues=tuple(queues))


def _throughputs(
    what_if: WhatIf, config: Config, opencost: OpenCostSnapshot, before: Chargeback
) -> tuple[OpenCostSnapshot, list[str]]:
    """The month with each asked model's namespace at its new throughput (the rate window,
    which the report does not print, as it was)."""
    hosted = {m.model: m.self_hosted for m in config.llm_models if m.self_hosted is not None}
    # Every throughput measured on the month as read, then each namespace scaled once.
    by_namespace: dict[str, list[Throughput]] = {}
    notes = []
    for model, asked in sorted(what_if.tokens_per_second.items()):
        key = f"tokens_per_second.{model}"
        namespace = hosted[model].namespace
        here = frozenset(m for m, s in hosted.items() if s.namespace == namespace)
        change = measured_throughput(key, model, (namespace, here), asked, opencost.month, before)
        by_namespace.setdefault(namespace, []).append(change)
        notes.append(
            f"{key}: the month served {model} at {change.measured:,.0f} tokens/s per GPU in "
            f"{namespace}; at {asked:,.0f} its {change.held:,.1f} GPU-hours would have been "
            f"{change.needed:,.1f}, the difference idle"
        )
    month = opencost.month
    for namespace, changes in sorted(by_namespace.items()):
        key = ", ".join(f"tokens_per_second.{c.model}" for c in changes)
        month = served_faster(key, month, namespace, changes)
    return replace(opencost, month=month), notes
