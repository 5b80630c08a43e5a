"""The forecast's back-test on the demo's last three closed months: MAPE and interval coverage.

    python -m bench.forecast_backtest                 # the three months before NOW's
    python -m bench.forecast_backtest --months 6
    python -m bench.forecast_backtest --synthetic      # seeded months unlike the demo's

The demo's fakes start on loopback at a fixed clock (NOW, as the tests use); each closed month
(and the one before it, for the prior) is read `by_day` through the exporter's own readers and
joined day by day (exporter.ledger.days), as FOCUS reads it; each team's and the cluster's whole
days are the differences of those month-to-date figures. Each month is then forecast as if at
the end of day 5, 10, 15, 20 and 25 (exporter.ledger.forecast.backtest) and set against its
actual. Prints one line per month and cut, then the figures over all months, as docs/forecast.md
shows them. `--synthetic` runs the same on seeded months the demo cannot show: a weekly cycle
(weekends at 60 %), day-to-day noise (10 %), a team whose cost ramps up through each month, and
one that starts mid-month. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import random
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


def synthetic(months: int, seed: int = 31) -> tuple[list[str], dict[str, dict[str, list[float]]]]:
    """Seeded daily costs: steady, weekly, ramping and late-starting teams, and their sum."""
    rng = random.Random(seed)
    labels = [f"2026-{m:02d}" for m in range(1, months + 2)]
    out: dict[str, dict[str, list[float]]] = {}
    weekday = 3  # 2026-01-01 is a Thursday
    for label in labels:
        length = 31 if label[-2:] in {"01", "03", "05", "07", "08", "10", "12"} else 30
        teams: dict[str, list[float]] = {k: [] for k in ("steady", "weekly", "ramp", "late")}
        for day in range(length):
            # One draw per team and day, in a fixed order: the seed gives the same months.
            noise = [1 + rng.gauss(0, 0.1) for _ in range(4)]
            weekend = 0.6 if (weekday + day) % 7 >= 5 else 1.0
            teams["steady"].append(100 * noise[0])
            teams["weekly"].append(100 * weekend * noise[1])
            teams["ramp"].append(20 + 160 * day / length * noise[2])
            teams["late"].append(150 * noise[3] if day >= length // 2 else 0.0)
        weekday = (weekday + length) % 7
        teams["cluster"] = [sum(v) for v in zip(*teams.values(), strict=True)]
        out[label] = teams
    return labels, out


def main(argv: list[str] | None = None) -> None:
    """Run the back-test and print its figures."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.forecast_backtest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--months", type=int, default=3, help="closed months (default 3)")
    parser.add_argument("--synthetic", action="store_true", help="seeded months, not the demo")
    args = parser.parse_args(argv)
    if args.synthetic:
        labels, days = synthetic(args.months)
    else:
        stack = DemoStack(clock=fixed_clock(NOW)).start()
        try:
            config = stack.config()
            months = _closed(config, args.months + 1)
            labels = [m.label for m in months]
            days = {m.label: daily_costs(config, m) for m in months}
        finally:
            stack.stop()
    trials: list[Trial] = []
    for before, month in itertools.pairwise(labels):
        got = backtest(month, days[month], days[before])
        trials += got
        for cut, (mape, coverage, n) in summary(got).items():
            print(f"{month} day {cut:2d}: MAPE {mape:6.2f} %  coverage {coverage:5.1f} %  n={n}")
    print("all months:")
    for cut, (mape, coverage, n) in summary(trials).items():
        print(f"  day {cut:2d}: MAPE {mape:6.2f} %  coverage {coverage:5.1f} %  n={n}")
    for key in sorted({t.key for t in trials}):
        mine = summary([t for t in trials if t.key == key])
        cells = "  ".join(f"d{c} {m:6.2f} % {v:3.0f} %" for c, (m, v, _) in mine.items())
        print(f"  {key:>16}: {cells}")
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
