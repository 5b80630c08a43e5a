"""Advice families: what each team could save a month, the top few per team, and what was
withheld for thin or bad history."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

ADVICE_LABELS = ("team", "kind", "workload", "action")

ADVICE_SAVING = family(
    "advice_saving_per_month",
    G,
    "Right-sizing advice: what following it would save a month at the applied GPU price, in "
    "the configured currency (kind mig, idle or quota; the top advice.top_n per team).",
    ADVICE_LABELS,
    "currency",
    "advice",
)

ADVICE_GPUS = family(
    "advice_gpus",
    G,
    "Right-sizing advice: the GPUs (or shares of one) following it frees.",
    ADVICE_LABELS,
    "GPUs",
    "advice",
)

ADVICE_COVERAGE = family(
    "advice_coverage_ratio",
    G,
    "Right-sizing advice: the share of the history window its evidence covers (how sure).",
    ADVICE_LABELS,
    "ratio",
    "advice",
)

ADVICE_WITHHELD = family(
    "advice_withheld",
    G,
    "Workloads and queues given no advice in this window, by reason (thin_history, "
    "not_finite, inconsistent, gpu_reset, no_price).",
    ("reason",),
    "count",
    "advice",
)
