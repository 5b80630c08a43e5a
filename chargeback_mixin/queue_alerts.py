"""Queue alerts (docs/queues.md): thrown-away work, and waiting while quota sits unused."""

from __future__ import annotations

from chargeback_mixin.alert import Alert
from chargeback_mixin.config import MixinConfig

__all__ = ["queue_alerts"]


def queue_alerts(c: MixinConfig) -> list[Alert]:
    """ChargebackTeamPreemptedWorkHigh and ChargebackTeamWaitingWhileQuotaIdle."""
    gpu = f'resource="{c.gpu_resource}"'
    team = c.by("team")
    preempted = f"sum {team} ({c.dedup('chargeback_queue_preempted_cost_month_to_date')})"
    gpu_cost = (
        f'sum {team} (team_component:chargeback_team_cost_month_to_date:sum{{component="gpu"}})'
    )
    pending = f"sum {team} ({c.dedup('chargeback_queue_pending_workloads')})"
    # GPUs of nominal quota no admitted workload uses, per cohort: what the waiting team could
    # have borrowed.
    unused = (
        f"sum {c.by('cohort')} (clamp_min({c.dedup('chargeback_quota_nominal', gpu)}"
        f" - {c.dedup('chargeback_quota_usage', gpu)}, 0))"
    )
    cohort_of = f"group {c.by('team', 'cohort')} ({c.dedup('chargeback_quota_nominal', gpu)})"
    return [
        Alert(
            "ChargebackTeamPreemptedWorkHigh",
            f"{preempted} / ({gpu_cost} > 0) > {c.preempted_cost_share:g}",
            c.preempted_for,
            "warning",
            "Kueue threw away a large share of a team's paid GPU work.",
            "Team {{ $labels.team }}<in-cluster> paid {{ $value | humanizePercentage }} of its "
            "GPU cost this month for work Kueue evicted before it finished, above "
            f"{c.preempted_cost_share * 100:g}% for {c.preempted_for}.",
        ),
        Alert(
            "ChargebackTeamWaitingWhileQuotaIdle",
            f"({pending} > 0) and on ({c.cluster_label}, team) group {team} "
            f"({cohort_of} * on ({c.cluster_label}, cohort) group_left () ({unused} > 0))",
            c.waiting_for,
            "info",
            "A team waits in Kueue while its cohort's quota sits unused.",
            "Team {{ $labels.team }}<in-cluster> has {{ $value | humanize }} workloads pending "
            f"while GPU quota in its cohort is unused, for {c.waiting_for}: the borrowing that "
            "did not happen.",
        ),
    ]
