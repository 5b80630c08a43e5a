"""Shared dashboard pieces: the datasource, cluster and team variables, queries, panels."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.builders.common import StackingConfig
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.variants import Dataquery
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models.common import FieldTextAlignment, StackingMode
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from chargeback_mixin.config import MixinConfig

__all__ = [
    "DS",
    "RATE_INTERVAL",
    "Query",
    "Section",
    "Units",
    "assemble",
    "cluster_var",
    "columns_table",
    "datasource_var",
    "label_var",
    "month_so_far",
    "on_cluster",
    "one_replica",
    "query",
    "series",
    "stat_panel",
    "table_panel",
    "timeseries_panel",
]

# Every panel and variable points at the `datasource` variable, never at a fixed uid or a
# `${DS_...}` import input (those break file provisioning).
DS = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
RATE_INTERVAL = "$__rate_interval"
Query = Builder[Dataquery]
# A titled row of panels.
Section = tuple[str, Sequence[Builder[dm.Panel]]]

# A catalogue metric or a recorded series, and whether a `{` follows it.
_SERIES = re.compile(r"\b([a-z_]+:[a-z0-9_]+:[a-z0-9_]+|chargeback_[a-z0-9_]+)\b(\{)?(?!\()")
# A raw series selector, inside a rate() (of a counter) or a deriv() (of a gauge) or not.
_RAW = re.compile(r"((?:rate|deriv)\()?(chargeback_[a-z0-9_]+\{[^}]*\})(\[[^\]]+\]\))?")
CLUSTER_VAR = "cluster"

# Grafana's own currency units; other currencies fall back to a suffix.
_GRAFANA_CURRENCIES = frozenset({"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "SEK"})


class Units:
    """Grafana unit ids for the catalogue's units, in the configured currency."""

    def __init__(self, c: MixinConfig) -> None:
        cur = c.currency.upper()
        self.money = f"currency{cur}" if cur in _GRAFANA_CURRENCIES else f"suffix: {cur}"
        self.money_per_hour = f"suffix: {cur}/h"
        self.ratio = "percentunit"
        self.gpus = "short"
        self.gpu_hours = "suffix: GPU-h"
        self.count = "short"
        # Tokens are not requests: a suffix, not Grafana's reqps.
        self.tokens_per_second = "suffix: tokens/s"
        # Failed refreshes, counted per second (Grafana's counts/sec), not requests.
        self.errors_per_second = "cps"
        self.seconds = "s"


def datasource_var() -> db.DatasourceVariable:
    """The `datasource` variable every query uses."""
    return db.DatasourceVariable("datasource").label("Data source").type("prometheus")


def cluster_var(c: MixinConfig) -> db.QueryVariable:
    """The `cluster` variable: All by default, so one unlabelled cluster shows too; shown only
    when the mixin is told the Prometheus holds several clusters (`multi_cluster`)."""
    # `.*` (not Grafana's list of values) also matches series without the label, the
    # single-cluster case where the variable lists nothing.
    return (
        db.QueryVariable(CLUSTER_VAR)
        .label("Cluster")
        .datasource(DS)
        .query(f"label_values(chargeback_team_cost_per_hour{c.sel()}, {c.cluster_label})")
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
        .include_all(True)
        .all_value(".*")
        .multi(True)
        # Grafana cannot hide a variable by how many values it has; the knob says whether the
        # Prometheus holds several clusters. Hidden, it stays All and every query still reads it.
        .hide(dm.VariableHide.DONT_HIDE if c.multi_cluster else dm.VariableHide.HIDE_VARIABLE)
    )


def on_cluster(c: MixinConfig, expr: str) -> str:
    """`expr` with every series selector narrowed to the clusters the variable picks."""
    matcher = f'{c.cluster_label}=~"${CLUSTER_VAR}"'

    def narrow(m: re.Match[str]) -> str:
        return f"{m.group(1)}{{{matcher}, " if m.group(2) else f"{m.group(1)}{{{matcher}}}"

    return _SERIES.sub(narrow, expr)


def one_replica(c: MixinConfig, expr: str) -> str:
    """`expr` with every raw series (or its rate) reduced to one copy across replicas."""
    without = f"max without ({', '.join(c.replica_labels)})"

    def dedup(m: re.Match[str]) -> str:
        if m.group(1) and m.group(3):
            # Over each replica's own samples first, as in the rules: merged replicas zigzag.
            return f"{without} ({m.group(1)}{m.group(2)}{m.group(3)})"
        inner = f"{without} ({m.group(2)})"
        return f"{m.group(1) or ''}{inner}{m.group(3) or ''}"

    return _RAW.sub(dedup, expr)


def _filter_by_cluster(c: MixinConfig, built: dm.Dashboard) -> None:
    """Narrow every query by the cluster variable; count each raw series once per replica."""
    for panel in built.panels or []:
        for target in getattr(panel, "targets", None) or []:
            # Recorded series are one copy already; raw ones are not, as in the rules.
            target.expr = one_replica(c, on_cluster(c, target.expr))
    for var in (built.templating.list_val or []) if built.templating else []:
        if var.type_val == "query" and var.name != CLUSTER_VAR and isinstance(var.query, str):
            var.query = on_cluster(c, var.query)


def label_var(
    c: MixinConfig, name: str, metric: str, *, label: str, include_all: bool = False
) -> db.QueryVariable:
    """A variable listing the values of one label of one catalogue metric."""
    var = (
        db.QueryVariable(name)
        .label(label)
        .datasource(DS)
        .query(f"label_values({metric}{c.sel()}, {name})")
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
    )
    if include_all:
        var = var.include_all(True).all_value(".*").multi(True)
    return var


def query(expr: str, legend: str = "", *, instant: bool = False, ref: str = "A") -> Query:
    """A Prometheus query on the datasource variable."""
    q = prometheus.Dataquery().expr(expr).ref_id(ref).datasource(DS)
    if legend:
        q = q.legend_format(legend)
    q = q.instant().format(PromQueryFormat.TABLE) if instant else q.range()
    return q


def series(*lines: tuple[str, str]) -> list[Query]:
    """Range queries, one a (expression, legend), lettered A, B, C... in the order given."""
    return [query(expr, legend, ref=chr(ord("A") + n)) for n, (expr, legend) in enumerate(lines)]


def assemble(
    c: MixinConfig,
    slug: str,
    title: str,
    description: str,
    sections: Sequence[Section],
    variables: Sequence[Builder[dm.VariableModel]] = (),
) -> dm.Dashboard:
    """A dashboard with the mixin's uid, tags, refresh, time range, datasource and cluster.

    Each section is an expanded row followed by its panels; panel ids are numbered in order.
    Every query is narrowed here, in one place, to the clusters the `cluster` variable picks,
    so no panel can forget it.
    """
    dash = (
        db.Dashboard(title)
        .uid(c.dashboard_uid_prefix + slug)
        .description(description)
        .tags(list(c.dashboard_tags))
        .refresh(c.dashboard_refresh)
        .time(c.dashboard_time_from, c.dashboard_time_to)
        .timezone(c.dashboard_timezone)
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .editable()
        # A dropdown of every dashboard with the mixin's tags, keeping time and variables,
        # as kubernetes-mixin's boards have.
        .link(
            db.DashboardLink(c.dashboard_links_title)
            .type(dm.DashboardLinkType.DASHBOARDS)
            .tags(list(c.dashboard_tags))
            .as_dropdown(True)
            .include_vars(True)
            .keep_time(True)
            .target_blank(False)
        )
        .with_variable(datasource_var())
        .with_variable(cluster_var(c))
    )
    for var in variables:
        dash = dash.with_variable(var)
    for row_title, panels in sections:
        dash = dash.with_row(db.Row(row_title).collapsed(False))
        for panel in panels:
            dash = dash.with_panel(panel)
    built = dash.build()
    for number, built_panel in enumerate(built.panels or [], start=1):
        built_panel.id_val = number
    _lay_out(built)
    _filter_by_cluster(c, built)
    return built


GRID_WIDTH = 24


def _lay_out(built: dm.Dashboard) -> None:
    """Place panels left to right, a new line when the next would not fit the 24 columns.

    Each row starts a new line; no panel is wider than the grid or overlaps another.
    """
    x, y, bottom = 0, 0, 0
    for panel in built.panels or []:
        pos = panel.grid_pos or dm.GridPos()
        width = min(pos.w, GRID_WIDTH)
        if isinstance(panel, dm.RowPanel):
            x, y, width = 0, bottom, GRID_WIDTH
        elif x + width > GRID_WIDTH:
            x, y = 0, bottom
        panel.grid_pos = dm.GridPos(h=pos.h, w=width, x=x, y=y)
        x, bottom = x + width, max(bottom, y + pos.h)
        if isinstance(panel, dm.RowPanel):
            x, y = 0, bottom


_Panel = TypeVar("_Panel", timeseries.Panel, stat.Panel, table.Panel)


def _panel(
    panel: _Panel,
    title: str,
    description: str,
    unit: str,
    targets: Sequence[Query],
    width: int,
    height: int,
) -> _Panel:
    """What every panel has: title, description, unit, the datasource, size and queries."""
    panel = (
        panel.title(title)
        .description(description)
        .unit(unit)
        .datasource(DS)
        .span(width)
        .height(height)
    )
    for target in targets:
        panel = panel.with_target(target)
    return panel


def timeseries_panel(
    title: str,
    description: str,
    unit: str,
    targets: Sequence[Query],
    *,
    width: int = 12,
    height: int = 8,
    stacked: bool = False,
) -> timeseries.Panel:
    """A time series panel with a unit, a description and a table legend."""
    panel = _panel(timeseries.Panel(), title, description, unit, targets, width, height)
    panel = panel.fill_opacity(20 if stacked else 5)
    if stacked:
        panel = panel.stacking(StackingConfig().mode(StackingMode.NORMAL))
    return panel


# Grafana's relative time for "this month so far" (from the start of the calendar month in
# the dashboard's time zone to now), as a panel's own time range.
MONTH_SO_FAR = "now/M"


def month_so_far(panel: timeseries.Panel) -> timeseries.Panel:
    """The panel over the month so far, whatever range the dashboard shows."""
    return panel.time_from(MONTH_SO_FAR)


def stat_panel(
    title: str,
    description: str,
    unit: str,
    targets: Sequence[Query],
    *,
    width: int = 6,
    height: int = 4,
) -> stat.Panel:
    """A single-value panel with a unit and a description."""
    return _panel(stat.Panel(), title, description, unit, targets, width, height)


def table_panel(
    title: str,
    description: str,
    unit: str,
    targets: Sequence[Query],
    *,
    width: int = 24,
    height: int = 8,
    rename: dict[str, str] | None = None,
) -> table.Panel:
    """A table that merges instant queries on their labels, one column per query."""
    panel = (
        _panel(table.Panel(), title, description, unit, targets, width, height)
        # Set explicitly: the SDK's model fills these defaults in when it reads a table back.
        .align(FieldTextAlignment.AUTO)
        .inspect(False)
        .with_transformation(dm.DataTransformerConfig(id_val="merge", options={}))
    )
    if rename:
        panel = panel.with_transformation(
            dm.DataTransformerConfig(
                id_val="organize",
                options={"excludeByName": {"Time": True}, "renameByName": dict(rename)},
            )
        )
    return panel


def columns_table(
    title: str,
    description: str,
    unit: str,
    columns: Sequence[tuple[str, str]],
    **options: int,
) -> table.Panel:
    """A `table_panel` with one named column per (name, instant query), in the order given."""
    refs = [chr(ord("A") + n) for n in range(len(columns))]
    return table_panel(
        title,
        description,
        unit,
        [query(expr, instant=True, ref=ref) for (_, expr), ref in zip(columns, refs, strict=True)],
        rename={f"Value #{ref}": name for (name, _), ref in zip(columns, refs, strict=True)},
        **options,
    )
