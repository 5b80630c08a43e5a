"""Month-to-date idle GPU-hours through Prometheus: one subquery per day, closed days kept.

Upstream: `GET <url>/api/v1/query` (Prometheus HTTP API). The month so far (from midnight of
the 1st in the configured zone to `now`) is cut into pieces of one day, the last ending at
`now`; for each piece and each utilisation metric, one instant query at the piece's end:

    sum_over_time((
        (avg by (<labels>) (<metric>) < bool <threshold>)
      / on (<device>) group_left count by (<device>) (avg by (<labels>) (<metric>))
    )[<piece>:<step>])

It counts, per GPU (or MIG instance) and pod, the steps at which the pod held it below the
idle threshold, split evenly among the pods that share it (time-slicing, as the DCGM source
splits it); count x step is idle GPU-hours. A series without a pod is a GPU nobody held:
unallocated, not waste, so not counted. `DCGM_FI_PROF_GR_ENGINE_ACTIVE` is used where a series
has it, else `DCGM_FI_DEV_GPU_UTIL` against the threshold in percent.

Why pieces: Prometheus materialises a subquery's inner result (steps x series) and refuses a
query over `--query.max-samples` (50M by default). A 31-day month at a 5m step is 8,928 steps;
at 1,250 nodes x 8 GPUs that is 89M points in one query, over the limit. One day is 288 steps,
2.9M points, and a piece that ended more than `SETTLE` ago no longer changes, so it is read
once per process and kept: a refresh re-reads only the current day.

Each piece is evaluated 1 ms before its end over exactly its length, so its aligned steps fall
in [start, end) whether the Prometheus closes ranges on the left (2.x) or not (3.x), and no
step is counted by two pieces. A count that is NaN, negative or larger than the steps its piece
has is dropped and counted, and fails the read: its idle hours, and their waste, would be
missing from the month to date.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from exporter.sources.checks import (
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    refuse_dropped,
)
from exporter.sources.dcgm.fields import GPU_UTIL, GR_ENGINE_ACTIVE, checked_labels, describe
from exporter.sources.dcgm.mig import mig_share
from exporter.sources.dcgm.prometheus import instant
from exporter.sources.dcgm.records import IdleHours

__all__ = ["SETTLE", "Piece", "idle_expr", "pieces", "read_idle_hours"]

DAY_MS = 86_400_000
# Samples of a closed piece have all been scraped and written by then (the scrape interval and
# Prometheus's 5m lookback are shorter), so its count is final.
SETTLE = timedelta(minutes=10)
# The labels that name one GPU or MIG instance, in every spelling dcgm-exporter has used.
_DEVICE = ("gpu", "UUID", "uuid", "Hostname", "hostname", "GPU_I_ID")
_BLANK_TEXT = "<<<"

Vector = list[tuple[dict[str, str], float]]
_Key = tuple[str, str, str, tuple[tuple[str, str], ...]]  # namespace, pod, model, pod labels
_CACHES: weakref.WeakKeyDictionary[httpx.Client, dict[tuple[str, int], Vector]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Piece:
    """A stretch of the month in Unix milliseconds, [start_ms, end_ms)."""

    start_ms: int
    end_ms: int

    def steps(self, step_ms: int) -> int:
        """How many aligned subquery steps fall in the piece: the most one series can count."""
        first = -(-(self.start_ms - 1) // step_ms)
        last = (self.end_ms - 1) // step_ms
        return max(0, last - first + 1)


def pieces(start: datetime, now: datetime) -> list[Piece]:
    """The month from `start` to `now`, in pieces of one day (the last one ends at `now`)."""
    begin, end = _ms(start), _ms(now)
    return [Piece(at, min(at + DAY_MS, end)) for at in range(begin, end, DAY_MS)]


def idle_expr(
    metric: str, threshold: float, labels: Sequence[str], length_ms: int, step_ms: int
) -> str:
    """The PromQL counting, per series, the steps a held GPU spent below `threshold`."""
    by, on = ", ".join(labels), ", ".join(_DEVICE)
    mean = f"avg by ({by}) ({metric})"
    share = f"({mean} < bool {threshold:.6g}) / on ({on}) group_left count by ({on}) ({mean})"
    return f"sum_over_time(({share})[{length_ms}ms:{step_ms}ms])"


def read_idle_hours(
    client: httpx.Client,
    labels: Sequence[str],
    threshold: float,
    step: timedelta,
    span: tuple[datetime, datetime],
    tally: Tally,
) -> tuple[IdleHours, ...]:
    """Idle GPU-hours per pod from `span` = (month start, now); closed pieces are kept."""
    step_ms = round(step.total_seconds() * 1000)
    cache = _CACHES.setdefault(client, {})
    kept: dict[tuple[str, int], Vector] = {}
    closed_before = _ms(span[1] - SETTLE)
    totals: dict[_Key, float] = {}
    local = Tally()
    for piece in pieces(*span):
        found: dict[str, Vector] = {}
        for metric, limit in ((GR_ENGINE_ACTIVE, threshold), (GPU_UTIL, threshold * 100)):
            expr = idle_expr(metric, limit, labels, piece.end_ms - piece.start_ms, step_ms)
            key = (expr, piece.end_ms)
            vector = cache.get(key)
            if vector is None:
                at = datetime.fromtimestamp((piece.end_ms - 1) / 1000, tz=UTC)
                vector = instant(client, expr, at)
            if piece.end_ms <= closed_before:
                kept[key] = vector
            found[metric] = vector
        chosen = _preferred(found[GR_ENGINE_ACTIVE], found[GPU_UTIL])
        _add(totals, chosen, piece.steps(step_ms), step_ms / 3_600_000, local)
    refuse_dropped("dcgm", local, "idle GPU-hour counts")
    tally.add(local)
    # Only this month's closed pieces stay: a new month starts the cache afresh.
    cache.clear()
    cache.update(kept)
    return tuple(
        IdleHours(namespace, pod, model, pod_labels, hours)
        for (namespace, pod, model, pod_labels), hours in sorted(totals.items())
    )


def _preferred(engine: Vector, util: Vector) -> Vector:
    """Engine activity where a series has it, else GPU_UTIL; never a MIG GPU's parent too."""
    seen = {_identity(labels) for labels, _ in engine if "gpu" in labels}
    mig = {(ident[0], ident[1]) for ident in seen if ident[2]}
    rest = [
        (labels, value)
        for labels, value in util
        if "gpu" in labels
        and _identity(labels) not in seen
        and (_identity(labels)[0], _identity(labels)[1]) not in mig
    ]
    return [*engine, *rest]


def _identity(labels: Mapping[str, str]) -> tuple[str, ...]:
    ident, _ = describe(labels)
    return (ident["node"], ident["gpu"], ident["mig_instance"], ident["uuid"], ident["pod"])


def _add(
    totals: dict[_Key, float],
    vector: Iterable[tuple[dict[str, str], float]],
    most: int,
    step_hours: float,
    tally: Tally,
) -> None:
    for labels, value in vector:
        if "gpu" not in labels:
            continue
        ident, pod_labels = describe(labels)
        if not ident["pod"]:
            continue  # nobody held it: unallocated, which is not waste
        try:
            checked_labels(ident, pod_labels, f"GPU {ident['gpu'][:60]!r}")
            share = _share(ident, value, most)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        key = (ident["namespace"], ident["pod"], ident["model"], tuple(sorted(pod_labels.items())))
        totals[key] = totals.get(key, 0.0) + value * step_hours * share


def _share(ident: Mapping[str, str], steps: float, most: int) -> float:
    """The series' share of a GPU, once its step count is known to be possible."""
    what = f"GPU {ident['gpu']} on {ident['node']!r} (pod {ident['pod']!r})"
    if not math.isfinite(steps):
        raise BadRecord(NON_FINITE, f"{what}: idle steps are {steps}")
    # Each step adds at most 1 (a share of one GPU), so more than the piece has is corrupt.
    if not 0 <= steps <= most + 1e-9:
        raise BadRecord(OUT_OF_RANGE, f"{what}: {steps:g} idle steps, the piece has {most}")
    profile = ident["mig_profile"]
    if not profile:
        return 1.0
    if profile.startswith(_BLANK_TEXT):
        raise BadRecord(MISSING_FIELD, f"{what}: MIG profile is DCGM's blank {profile!r}")
    try:
        return mig_share(profile, ident["model"])
    except ValueError as exc:
        raise BadRecord(WRONG_TYPE, f"{what}: {exc}") from None


def _ms(moment: datetime) -> int:
    return math.floor(moment.timestamp() * 1000)
