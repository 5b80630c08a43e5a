"""The exporter's own health alerts: its sources, builds, worker, reconciles and team cap."""

from __future__ import annotations

from chargeback_mixin.alert import Alert
from chargeback_mixin.config import MixinConfig

__all__ = ["health_alerts", "self_alerts"]

FAILED = 'state="failed"'


def health_alerts(c: MixinConfig) -> list[Alert]:
    """Sources down or stale, and the exporter gone from Prometheus."""
    return [
        Alert(
            "ChargebackSourceDown",
            f"chargeback_source_up{c.sel()} == 0",
            c.source_down_for,
            "warning",
            "The exporter cannot refresh one of its sources.",
            "Source {{ $labels.source }} of {{ $labels.instance }}<in-cluster> has failed "
            "every refresh for "
            f"{c.source_down_for}; its families keep their last good values until they go stale.",
        ),
        Alert(
            "ChargebackSourceStale",
            f"time() - chargeback_source_last_success_timestamp_seconds{c.sel()}"
            f" > {c.source_stale_seconds:g}",
            c.source_stale_for,
            "warning",
            "A source's data is old.",
            "Source {{ $labels.source }} of {{ $labels.instance }}<in-cluster> last refreshed "
            "{{ $value | humanizeDuration }} ago.",
        ),
        Alert(
            "ChargebackExporterAbsent",
            # Per cluster when its targets are all down; absent() when none is scraped at all.
            f"max {c.by()} (up{c.sel()}) == 0 or absent(up{c.sel()})",
            c.exporter_absent_for,
            "critical",
            "The chargeback exporter has disappeared from Prometheus.",
            f"No target matching up{c.sel()}<in-cluster> has been up for {c.exporter_absent_for}; "
            "chargeback metrics, rules and alerts are blind.",
        ),
    ]


def _each_replica(c: MixinConfig, fn: str, metric: str, window: str, *matchers: str) -> str:
    """`fn` over each replica's own counter, then one copy: resets stay per replica."""
    # Merging replicas before rate()/increase() would read two counters as one that resets.
    inner = f"{fn}({metric}{c.sel(*matchers)}[{window}])"
    return f"max without ({', '.join(c.replica_labels)}) ({inner})"


def _count(value: str = "$value") -> str:
    # increase() extrapolates to the window's edges (1 restart may read 1.02): show whole ones.
    return "{{ " + value + ' | printf "%.0f" }}'


def self_alerts(c: MixinConfig) -> list[Alert]:
    """The exporter's own health: discovery, validation, builds, the worker, reconciles, caps."""
    return [
        Alert(
            "ChargebackSourceEndpointsFailed",
            f"{c.dedup('chargeback_source_endpoints', FAILED)} > {c.failed_endpoints_min:g}",
            c.failed_endpoints_for,
            "warning",
            "A source cannot read some of its endpoints; their GPUs run on their last good read.",
            "{{ $value | humanize }} endpoints of source {{ $labels.source }}<in-cluster> have "
            f"failed for {c.failed_endpoints_for}; the GPUs behind them keep their last good "
            "read (power unknown) until it is older than max_staleness, then leave the GPU "
            "families.",
        ),
        Alert(
            "ChargebackBuildFailing",
            _each_replica(c, "increase", "chargeback_build_errors_total", c.build_errors_window)
            + " > 0",
            c.build_errors_for,
            "warning",
            "The exporter keeps failing to build its exposition and serves stale figures.",
            "The {{ $labels.stage }} stage of the exposition<in-cluster> has kept failing for "
            f"{c.build_errors_for} (failures in the last {c.build_errors_window}: "
            + _count()
            + "); the exporter serves its last good figures, each source's only until its "
            "max_staleness.",
        ),
        Alert(
            "ChargebackSourceRecordsDropped",
            # Identical duplicates are kept once: dropping them loses nothing.
            _each_replica(
                c,
                "rate",
                "chargeback_source_records_dropped_total",
                c.records_dropped_window,
                'reason!="duplicate"',
            )
            + f" * 3600 > {c.records_dropped_per_hour:g}",
            c.records_dropped_for,
            "info",
            "A source keeps dropping upstream records that fail validation.",
            "Source {{ $labels.source }}<in-cluster> drops {{ $value | humanize }} records an "
            "hour as {{ $labels.reason }} (above "
            f"{c.records_dropped_per_hour:g} an hour for {c.records_dropped_for}); "
            "each such read is refused and its last complete one served (a corrupt DCGM "
            "sample only leaves its GPU's utilisation unknown).",
        ),
        Alert(
            "ChargebackWorkerRestarted",
            _each_replica(
                c, "increase", "chargeback_worker_restarts_total", c.worker_restarts_window
            )
            + " > 0",
            c.worker_restarts_for,
            "warning",
            "The exporter's refresh worker died and was restarted.",
            "The refresh worker of the exporter<in-cluster> died and was started again "
            f"(restarts in the last {c.worker_restarts_window}: " + _count() + "); scrapes "
            "kept the last values meanwhile.",
        ),
        Alert(
            "ChargebackWorkerDown",
            # Per cluster: while one replica's worker works, its figures keep coming.
            f"max {c.by()} ({c.dedup('chargeback_worker_up')}) == 0",
            c.worker_down_for,
            "critical",
            "No exporter replica has a working refresh worker: the figures stop.",
            "No replica of the exporter<in-cluster> has had a working refresh worker for "
            f"{c.worker_down_for}: it cannot start, or it has sent no figures within the "
            "shortest max_staleness. The exporter then serves no source figures.",
        ),
        Alert(
            "ChargebackSourceClosedDaysRepaired",
            _each_replica(
                c,
                "increase",
                "chargeback_source_reconcile_repairs_total",
                c.reconcile_repairs_window,
            )
            + " > 0",
            c.reconcile_repairs_for,
            "info",
            "Closed days changed upstream and the exporter corrected its figures.",
            "Re-reading its closed days, source {{ $labels.source }}<in-cluster> found kept "
            f"records changed upstream and corrected them (in the last "
            f"{c.reconcile_repairs_window}: " + _count() + "); month-to-date figures moved.",
        ),
        Alert(
            "ChargebackTeamsFolded",
            f"{c.dedup('chargeback_teams_over_cap')} > 0",
            c.teams_folded_for,
            "warning",
            "Teams beyond attribution.max_teams are charged together as __other__.",
            "{{ $value | humanize }} teams<in-cluster> are beyond attribution.max_teams: "
            "their cost is folded into __other__, so neither the dashboards nor the statement "
            "show it per team.",
        ),
    ]
