"""Advice series: the top advice.top_n per team, and the withheld counted by reason."""

from __future__ import annotations

from exporter.exposition.catalogue.advice import (
    ADVICE_COVERAGE,
    ADVICE_GPUS,
    ADVICE_SAVING,
    ADVICE_WITHHELD,
)
from exporter.exposition.samples import Sample
from exporter.ledger.result import Chargeback

__all__ = ["series"]

# The reasons always served, so a rule or panel reads 0 rather than nothing.
REASONS = ("thin_history", "not_finite", "inconsistent", "gpu_reset", "no_price")


def series(chargeback: Chargeback) -> list[Sample]:
    """With advice: each team's `advice.top_n` largest savings, the withheld by reason."""
    advice = chargeback.advice
    if advice is None:
        return []
    top_n = advice.top_n
    out: list[Sample] = []
    # Teams over the cap count as `__other__`: the top n of their advice together.
    folded = sorted(
        advice.advice,
        key=lambda a: (chargeback.counted_as(a.team), -a.saving, a.kind, a.workload),
    )
    kept: dict[str, int] = {}
    for item in folded:
        team = chargeback.counted_as(item.team)
        if kept.get(team, 0) >= top_n:
            continue
        kept[team] = kept.get(team, 0) + 1
        labels = {
            "team": team,
            "kind": item.kind,
            "workload": item.workload,
            "action": item.action,
        }
        out.append(Sample.of(ADVICE_SAVING, item.saving, **labels))
        out.append(Sample.of(ADVICE_GPUS, item.gpus, **labels))
        out.append(Sample.of(ADVICE_COVERAGE, item.coverage, **labels))
    reasons = advice.reasons()
    for reason in sorted({*REASONS, *reasons}):
        out.append(Sample.of(ADVICE_WITHHELD, float(reasons.get(reason, 0)), reason=reason))
    return out
