"""Dashboard `chargeback-quota-borrowing`: Kueue GPU quota per cohort and ClusterQueue."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    columns_table,
    label_var,
    query,
    series,
    stat_panel,
    timeseries_panel,
)
from chargeback_mixin.rules import QUOTA_BORROWED, QUOTA_LENT, borrowed_cost

__all__ = ["build"]

COHORT = 'cohort=~"$cohort"'
FIELDS = ("nominal", "usage", "borrowed", "lent", "borrowing_limit", "lending_limit")


def _queues(c: MixinConfig, u: Units) -> Section:
    gpu = f'resource="{c.gpu_resource}"'

    def per_queue(field: str) -> str:
        return (
            f"sum by (cohort, cluster_queue, team) (chargeback_quota_{field}{c.sel(COHORT, gpu)})"
        )

    return (
        "ClusterQueues",
        [
            columns_table(
                "GPU quota by ClusterQueue",
                "Kueue GPU quota per cohort and ClusterQueue: nominal, in use, borrowed from "
                "the cohort, lent to it (as the exporter apportions it), and the limits "
                "(+Inf when unset).",
                u.gpus,
                [(f, per_queue(f)) for f in FIELDS],
            ),
            timeseries_panel(
                "GPU usage against nominal quota",
                "GPUs in use per ClusterQueue beside its nominal quota; usage above nominal is "
                "borrowed.",
                u.gpus,
                series(
                    (per_queue("usage"), "{{cluster_queue}} ({{team}}) usage"),
                    (per_queue("nominal"), "{{cluster_queue}} ({{team}}) nominal"),
                ),
            ),
            timeseries_panel(
                "Borrowed and lent GPUs by cohort",
                "GPUs borrowed and lent within each cohort; the two match when the exporter "
                "can find a lender for every borrowed GPU.",
                u.gpus,
                series(
                    (
                        f"sum by (cohort) (chargeback_quota_borrowed{c.sel(COHORT, gpu)})",
                        "{{cohort}} borrowed",
                    ),
                    (
                        f"sum by (cohort) (chargeback_quota_lent{c.sel(COHORT, gpu)})",
                        "{{cohort}} lent",
                    ),
                ),
            ),
        ],
    )


def _teams(c: MixinConfig, u: Units) -> Section:
    hours = f"{c.hours_per_month:g}"
    return (
        "Teams",
        [
            timeseries_panel(
                "Borrowed GPUs by team",
                "GPUs each team borrows from its cohort now.",
                u.gpus,
                [query(QUOTA_BORROWED, "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "Lent GPUs by team",
                "GPUs of each team's quota that others in the cohort use now.",
                u.gpus,
                [query(QUOTA_LENT, "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "Borrowing cost per hour by team",
                "What each team pays now for the quota it borrows (the borrowed component: "
                "borrowed GPUs x the flavor's GPU price).",
                u.money_per_hour,
                [query(borrowed_cost(c), "{{team}}")],
                width=8,
            ),
            stat_panel(
                "Borrowing next month, if it stays as now",
                f"What each team would pay in a month of {hours} hours if it kept borrowing "
                "what it borrows now: borrowed cost per hour x hours in a month.",
                u.money,
                [query(f"({borrowed_cost(c)}) * {hours}", "{{team}}")],
                width=24,
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The quota-and-borrowing dashboard."""
    u = Units(c)
    return assemble(
        c,
        "quota-borrowing",
        "Chargeback / Quota and borrowing",
        "Kueue GPU quota per cohort and ClusterQueue, who borrows from whom, and what the "
        "borrowing costs now and would cost over a month.",
        [_queues(c, u), _teams(c, u)],
        [label_var(c, "cohort", "chargeback_quota_nominal", label="Cohort", include_all=True)],
    )
