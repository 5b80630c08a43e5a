"""Quota families, from Kueue: nominal, used, borrowed and lent quota and the limits."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

QUOTA_LABELS = ("team", "cluster_queue", "cohort", "flavor", "resource")

QUOTA_NOMINAL = family(
    "quota_nominal",
    G,
    "Kueue nominal quota (GPUs as counts, CPU in cores, memory in bytes).",
    QUOTA_LABELS,
    "native",
    "kueue",
)

QUOTA_USAGE = family(
    "quota_usage",
    G,
    "Kueue quota in use by admitted workloads.",
    QUOTA_LABELS,
    "native",
    "kueue",
)

QUOTA_BORROWED = family(
    "quota_borrowed",
    G,
    "Quota a ClusterQueue borrows from its cohort (Kueue status).",
    QUOTA_LABELS,
    "native",
    "kueue",
)

QUOTA_LENT = family(
    "quota_lent",
    G,
    "Quota of a ClusterQueue that others in its cohort use, as apportioned by the exporter.",
    QUOTA_LABELS,
    "native",
    "kueue",
)

QUOTA_BORROWING_LIMIT = family(
    "quota_borrowing_limit",
    G,
    "Kueue borrowing limit; +Inf when unset.",
    QUOTA_LABELS,
    "native",
    "kueue",
)

QUOTA_LENDING_LIMIT = family(
    "quota_lending_limit",
    G,
    "Kueue lending limit; +Inf when unset.",
    QUOTA_LABELS,
    "native",
    "kueue",
)
