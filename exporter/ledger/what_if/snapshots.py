"""The month's records as a what-if changes them: a ClusterQueue's quota, a serving
namespace's hours at another throughput (pure; the join then runs on them as on any month)."""

from __future__ import annotations

from dataclasses import replace

from exporter.config.schema import Config
from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.result import Chargeback
from exporter.ledger.what_if.settings import WhatIf
from exporter.ledger.what_if.throughput import Throughput, measured_throughput, served_faster
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.opencost.snapshot import OpenCostSnapshot
from exporter.sources.table import Snapshots

__all__ = ["what_if_snapshots"]


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
