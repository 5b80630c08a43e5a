"""Calendar families: the bounds of the month the month-to-date totals cover."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

# The month the month-to-date totals cover, so rules can forecast in the configured zone.
MONTH_START_TIMESTAMP_SECONDS = family(
    "month_start_timestamp_seconds",
    G,
    "Unix time of the start of the current calendar month in the configured time zone.",
    (),
    "seconds",
    "config",
)

MONTH_END_TIMESTAMP_SECONDS = family(
    "month_end_timestamp_seconds",
    G,
    "Unix time of the start of the next calendar month in the configured time zone (the end "
    "of the current one).",
    (),
    "seconds",
    "config",
)
