"""The right-sizing advice section the team and idle dashboards share (docs/advice.md)."""

from __future__ import annotations

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import Section, Units, columns_table, query, stat_panel

__all__ = ["advice_section"]

SAVING = "chargeback_advice_saving_per_month"
GPUS = "chargeback_advice_gpus"
COVERAGE = "chargeback_advice_coverage_ratio"
WITHHELD = "chargeback_advice_withheld"


def advice_section(c: MixinConfig, u: Units, *matchers: str) -> Section:
    """A table of the advice (largest saving first) and the count withheld for thin history."""
    labels = ", ".join((c.cluster_label, "team", "kind", "workload", "action"))
    cols = [(SAVING, "Saves a month"), (GPUS, "GPUs freed"), (COVERAGE, "Window covered")]
    return (
        "Right-sizing advice",
        [
            columns_table(
                "What could be saved",
                "Advice from the last advice.window of DCGM and quota history, priced at the "
                "applied GPU-hour price: mig (fits a smaller MIG profile), idle (held below the "
                "idle threshold most of the window), quota (peak use well under nominal). The "
                "top advice.top_n per team; mig and idle on one workload are alternatives. "
                "Window covered says how sure: the share of the window the evidence spans.",
                u.money,
                [
                    (name, f"sort_desc(sum by ({labels}) ({metric}{c.sel(*matchers)}))")
                    for metric, name in cols
                ],
                width=18,
                height=10,
            ),
            stat_panel(
                "Withheld: history too thin or bad",
                "Workloads and queues given no advice this window (thin history, a NaN, a GPU "
                "reset, no price), cluster-wide: docs/advice.md says why each is withheld.",
                u.count,
                [query(f"sum({WITHHELD}{c.sel()})")],
                width=6,
            ),
        ],
    )
