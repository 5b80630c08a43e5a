"""The refresh worker's garbage collector: young collections every 50,000 allocations, not 700.

At ten thousand GPUs the worker holds some 400,000 long-lived objects (the sources' snapshots,
the last chargeback, its series and the render cache), and every refresh makes and drops as
many again, nearly all of them acyclic and freed by their reference counts the moment they go.
At CPython's default thresholds (700, 10, 10) the collector then ran two or three full passes
over that heap per rebuild, about 0.3 CPU-s each; a full collection after a steady refresh at
that size finds no cyclic garbage at all. With young collections 70 times rarer, a full pass
comes every few refreshes instead (the older generations' thresholds and CPython's own rule,
a full pass only once a quarter of the heap is new, are left as they are): the collector still
runs, and cyclic garbage is still freed, a little later (docs/sources/cpython-gc.md).
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_EVERY", "tune_collector"]

YOUNG_EVERY = 50_000  # allocations (net of frees) between two young collections


def tune_collector() -> None:
    """Set the young generation's threshold for a refreshing process; the older ones are kept."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_EVERY, middle, oldest)
