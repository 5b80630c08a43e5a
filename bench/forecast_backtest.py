"""The forecast's back-test on the demo's last three closed months: MAPE and interval coverage.

    python -m bench.forecast_backtest                 # the three months before NOW's
    python -m bench.forecast_backtest --months 6

The demo's fakes start on loopback at a fixed clock (NOW, as the tests use); each closed month
(and the one before it, for the prior) is read `by_day` through the exporter's own readers and
joined day by day (exporter.ledger.days), as FOCUS reads it; each team's and the cluster's whole
days are the differences of those month-to-date figures. Each month is then forecast as if at
the end of day 5, 10, 15, 20 and 25 (exporter.ledger.forecast.backtest) and set against its
actual. Prints one line per month and cut, then the figures over all months, as docs/forecast.md
shows them. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
from datetime import UTC, datetime, timedelta

from chargeback_demo.stack import DemoStack
from exporter.calendar import Month
from exporter.clock import fixed_clock
from exporter.config.schema import Config
from exporter.finance.month_read import read_month
from exporter.ledger.days import month_to_date_by_day
from exporter.ledger.forecast.backtest import Trial, backtest, summary
from exporter.ledger.forecast.build import CLUSTER, figures_of
from exporter.sources.readers import open_readers
from exporter.sources.reading import Reading

__all__ = ["NOW", "daily_costs", "main"]

NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)


def daily_costs(config: Config, month: Month) -> dict[str, list[float]]:
    """Each team's (and the cluster's, as `cluster`) cost of every day of a closed month."""
    reading = Reading.closed_month(month, by_day=True)
    readers = open_readers(config)
    try:
        read = read_month(readers, reading)
    finally:
        for reader in readers:
            reader.close()
    out: dict[str, list[float]] = {}
    before: dict[str, float] = {}
    for index, day in enumerate(month_to_date_by_day(config, read.snapshots, reading)):
        figures = figures_of(day)
        named = {k[1]: v for k, v in figures.items() if k[0] == "team"}
        named["cluster"] = figures.get(CLUSTER, 0.0)
        for key in sorted(set(named) | set(before)):
            out.setdefault(key, [0.0] * index).append(named.get(key, 0.0) - before.get(key, 0.0))
        before = named
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the back-test and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--months", type=int, default=3)
    args = parser.parse_args(argv)
    stack = DemoStack(clock=fixed_clock(NOW)).start()
    try:
        config = stack.config()
        months = _closed(config, args.months + 1)
        days = {m.label: daily_costs(config, m) for m in months}
    finally:
        stack.stop()
    trials: list[Trial] = []
    for before, month in itertools.pairwise(months):
        got = backtest(month.label, days[month.label], days[before.label])
        trials += got
        for cut, (mape, coverage, n) in summary(got).items():
            print(
                f"{month.label} day {cut:2d}: MAPE {mape:6.2f} %  coverage {coverage:5.1f} %  n={n}"
            )
    print("all months:")
    for cut, (mape, coverage, n) in summary(trials).items():
        print(f"  day {cut:2d}: MAPE {mape:6.2f} %  coverage {coverage:5.1f} %  n={n}")
    worst = max((t for t in trials if t.ape is not None), key=lambda t: t.ape or 0.0)
    print(f"worst: {worst.month} {worst.key} day {worst.cut}: {worst.ape:.2f} %")


def _closed(config: Config, count: int) -> list[Month]:
    """The `count` closed months before NOW's, oldest first."""
    out: list[Month] = []
    month = Month.of(NOW, config.zone)
    for _ in range(count):
        month = Month.of(month.start - timedelta(days=1), config.zone)
        out.append(month)
    return out[::-1]


if __name__ == "__main__":
    main()
