"""Dashboard `chargeback-reconciliation`: each bill against what the ledger recorded."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    columns_table,
    query,
    stat_panel,
    timeseries_panel,
)
from chargeback_mixin.rules import BILL_DRIFT, BILL_LABELS

__all__ = ["build"]

MONTH = 'period="month"'
DAY = 'period="day"'
LEGEND = "{{source}} {{provider}} {{scope}}"


def _month(c: MixinConfig, u: Units) -> Section:
    def by(metric: str, *matchers: str) -> str:
        return f"sum {c.by(*BILL_LABELS)} ({c.dedup(metric, *matchers)})"

    return (
        "The month's billed days",
        [
            columns_table(
                "Billed and recorded this month",
                "Per bill source, provider and scope, over the closed days the bill holds "
                "whole: what it billed (converted at the stated rate) and what the gateway "
                "(llm) or OpenCost (cluster) recorded for the same days.",
                u.money,
                [
                    ("Billed", by("chargeback_bill_billed", MONTH)),
                    ("Recorded", by("chargeback_bill_recorded", MONTH)),
                    ("Difference", by("chargeback_bill_difference", MONTH)),
                ],
                height=8,
            ),
            stat_panel(
                "Drift this month",
                "Billed minus recorded over billed: the figure ChargebackBillDrift alerts on.",
                u.ratio,
                [query(BILL_DRIFT, LEGEND, instant=True)],
                width=12,
            ),
            stat_panel(
                "Days billed",
                "Days of the month each bill holds whole; later days are not compared yet.",
                u.count,
                [query(by("chargeback_bill_billed_dates"), LEGEND, instant=True)],
                width=12,
            ),
        ],
    )


def _days(c: MixinConfig, u: Units) -> Section:
    def by(metric: str, *matchers: str, extra: tuple[str, ...] = ()) -> str:
        return f"max {c.by(*BILL_LABELS, *extra)} ({c.dedup(metric, *matchers)})"

    return (
        "Day by day",
        [
            timeseries_panel(
                "Last closed day: billed over recorded",
                "The ratio of the last day each bill holds whole; 1 is a day that matched.",
                u.ratio,
                [query(by("chargeback_bill_ratio", DAY), LEGEND)],
            ),
            timeseries_panel(
                "Last closed day: billed minus recorded",
                "Positive: the bill is higher than the records for that day.",
                u.money,
                [query(by("chargeback_bill_difference", DAY), LEGEND)],
            ),
            columns_table(
                "Last closed day billed and currency rates",
                "The start (UTC) of the last day each bill holds, and the rate its currency "
                "converts at, in units of the exporter's currency.",
                u.count,
                [
                    (
                        "Last day billed",
                        by("chargeback_bill_last_day_timestamp_seconds") + " * 1000",
                    ),
                    ("Rate", by("chargeback_bill_currency_rate", extra=("currency",))),
                ],
            ),
            stat_panel(
                "Gateway spend without a provider",
                "Spend on models no rule gave a provider, which no bill can claim: declare "
                "the model's publisher in llm_models.",
                u.money,
                [
                    query(
                        f"max {c.by()} "
                        f"({c.dedup('chargeback_llm_spend_without_provider_month_to_date')})",
                        instant=True,
                    )
                ],
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The reconciliation dashboard."""
    u = Units(c)
    return assemble(
        c,
        "reconciliation",
        "Chargeback / Reconciliation",
        "Provider invoices and cloud cost exports against the ledger's records, per closed day "
        "and for the month; a closed month trues up to them where configured.",
        [_month(c, u), _days(c, u)],
        [],
    )
