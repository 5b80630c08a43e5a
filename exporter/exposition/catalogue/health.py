"""Health families: each source's refreshes and drops, the build, the worker and the config."""

from __future__ import annotations

from exporter.exposition.catalogue.family import INFO, C, G, family

SOURCE_UP = family(
    "source_up",
    G,
    "1 if the last refresh of the source succeeded, else 0.",
    ("source",),
    "",
    "exporter",
)

SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS = family(
    "source_last_success_timestamp_seconds",
    G,
    "Unix time of the source's last successful refresh.",
    ("source",),
    "seconds",
    "exporter",
)

SOURCE_DURATION_SECONDS = family(
    "source_duration_seconds",
    G,
    "Duration of the source's last refresh.",
    ("source",),
    "seconds",
    "exporter",
)

SOURCE_BACKOFF_SECONDS = family(
    "source_backoff_seconds",
    G,
    "How long the source's upstream asked the exporter to wait (Retry-After, honoured up to 10 "
    "minutes) after its last refresh failed; the next refresh waits that long. 0 otherwise.",
    ("source",),
    "seconds",
    "exporter",
)

SOURCE_ERRORS = family(
    "source_errors",
    C,
    "Failed refreshes of a source, by reason.",
    ("source", "reason"),
    "",
    "exporter",
)

SOURCE_RECORDS_DROPPED = family(
    "source_records_dropped",
    C,
    "Upstream records (one allocation, GPU, ClusterQueue resource or LiteLLM row) and DCGM "
    "utilisation samples dropped by validation, by reason. A read that drops a record is "
    "refused and the source marked down; a dropped sample leaves its GPU counted.",
    ("source", "reason"),
    "",
    "exporter",
)

SOURCE_ENDPOINTS = family(
    "source_endpoints",
    G,
    "Endpoints a scraping source read in its last accepted refresh, by state: scraped, failed "
    "(not read: their GPUs stand in from the endpoint's last good read with their use and "
    "power unknown, or, discovered and never read, are missing from the GPU families) or "
    "not_ready (skipped as their EndpointSlice says).",
    ("source", "state"),
    "endpoints",
    "dcgm",
)

SOURCE_RECONCILE_REPAIRS = family(
    "source_reconcile_repairs",
    C,
    "Kept records of closed days (OpenCost: one allocation, or idle of one resource; LiteLLM: "
    "one day) that a periodic re-read found changed upstream and corrected; only for sources "
    "that keep closed days.",
    ("source",),
    "",
    "exporter",
)

BUILD_ERRORS = family(
    "build_errors",
    C,
    "Failed joins and renders of the exposition, by stage; the last good values keep serving.",
    ("stage",),
    "",
    "exporter",
)

WORKER_RESTARTS = family(
    "worker_restarts",
    C,
    "Times the refresh worker process died and was started again; scrapes kept the last values.",
    (),
    "",
    "exporter",
)

WORKER_UP = family(
    "worker_up",
    G,
    "1 while the refresh worker runs and its figures are fresh; 0 when it cannot start or has "
    "sent no figures within the shortest max_staleness (then no source figures are served).",
    (),
    "",
    "exporter",
)

BUILD = family(
    "build",
    INFO,
    "Build information of the exporter.",
    ("version",),
    "",
    "exporter",
)

CONFIG = family(
    "config",
    INFO,
    "Effective configuration of the exporter.",
    ("currency", "idle_policy"),
    "",
    "exporter",
)
