"""The gateway's spend per UTC date and model, for reconciling with the providers' bills.

Bills charge by UTC day and model, whoever sent the request, so the reconciliation needs the
month's use summed over teams but kept apart by date: (date, public name, provider model).
Closed dates are summed once and kept with the packed date they came from; a date packed again
(read anew) is summed again. A spend the proxy did not report adds nothing here: it is the
absence of a figure, and the reconciliation shows the bill's line as unmatched instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

from exporter.sources.litellm.key_breakdown import DayUsage, Use
from exporter.sources.litellm.packed import PackedDay
from exporter.sources.litellm.per_model import Usage

__all__ = ["DaySpend", "DaySpendMemo", "dated_spend", "day_spend"]

# (UTC date, public name, provider model) -> spend, in LiteLLM's currency.
DaySpend = dict[tuple[date, str, str], float]


def day_spend(day: date, usage: DayUsage) -> DaySpend:
    """One date's spend per (public name, provider model), over every team."""
    out: DaySpend = {}
    for (_, group, model), metrics in usage.items():
        if metrics.spend is not None:
            key = (day, group, model)
            out[key] = out.get(key, 0.0) + metrics.spend
    return out


def dated_spend(dated: Iterable[tuple[date, Iterable[Usage]]], last: date) -> DaySpend:
    """The spend of every date up to `last`, from a month read date by date."""
    out: DaySpend = {}
    for day, usage in dated:
        if day > last:
            break
        for _, _, group, model, metrics in usage:
            if metrics.spend is not None:
                key = (day, group, model)
                out[key] = out.get(key, 0.0) + metrics.spend
    return out


@dataclass
class DaySpendMemo:
    """Each closed date's sums, kept beside the packed date they were made from."""

    _kept: dict[str, tuple[PackedDay, DaySpend]] = field(default_factory=dict)

    def month(
        self, closed: Mapping[str, PackedDay], uses: list[Use], read: Mapping[str, DayUsage]
    ) -> DaySpend:
        """The month's spend by date: the closed dates (summed once each) and those read."""
        out: DaySpend = {}
        kept: dict[str, tuple[PackedDay, DaySpend]] = {}
        for d, packed in closed.items():
            before = self._kept.get(d)
            sums = before[1] if before is not None and before[0] is packed else None
            if sums is None:
                sums = _packed_spend(date.fromisoformat(d), packed, uses)
            kept[d] = (packed, sums)
            out.update(sums)
        self._kept = kept
        for d in sorted(read):
            if d not in closed:
                out.update(day_spend(date.fromisoformat(d), read[d]))
        return out


def _packed_spend(day: date, packed: PackedDay, uses: list[Use]) -> DaySpend:
    out: DaySpend = {}
    for position, spend in zip(packed.index, packed.spend, strict=True):
        if not math.isnan(spend):
            _, group, model = uses[position]
            key = (day, group, model)
            out[key] = out.get(key, 0.0) + spend
    return out
