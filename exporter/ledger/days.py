"""A month read by day, as the month to date at the end of each local day (pure).

The join is not linear (idle is shared by each window's usage, borrowing is measured against
the window's hours), so a day's cost is not the join of that day alone: the month to date is
asked of the snapshots at each day's end (`as_of_each`: OpenCost adds each day once to running
sums, LiteLLM sums its dates up to it; Kueue and DCGM keep no history and answer the same every
day) and charged in detail. One attributor and one set of memos serve every day, so a workload
is placed once for the month and a snapshot that does not change from one day to the next is
not charged again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.window import WindowMemo
from exporter.ledger.join import join
from exporter.ledger.llm.memo import LlmMemo
from exporter.ledger.result import Chargeback
from exporter.sources.reading import Reading, as_of_each
from exporter.sources.table import Snapshots

__all__ = ["month_to_date_by_day"]


def month_to_date_by_day(
    config: Config, snapshots: Mapping[str, object], reading: Reading
) -> Iterator[Chargeback]:
    """The detailed chargeback of the month to date at each local day's end, in order.

    `snapshots` were read `by_day` for `reading`; the last day is the whole month as read.
    """
    attributor, llm, windows = Attributor(config), LlmMemo(), WindowMemo()
    ends = reading.day_ends()
    each = {name: as_of_each(snapshot, ends) for name, snapshot in snapshots.items()}
    for day in ends:
        latest = Snapshots.of({name: next(days) for name, days in each.items()})
        yield join(config, attributor, latest, day, llm, detail=True, windows=windows)
