"""The demo's exposition: byte for byte the golden file, and the same in OpenMetrics and gzip."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse

from chargeback_demo.stack import DemoStack
from exporter.exposition.render import Exposition, render
from exporter.exposition.series.health import SourceHealth, build_error_samples, health_samples
from exporter.serve.snapshot import Reconciled
from exporter.serve.wiring import Joiner, static_samples
from exporter.sources.checks import DROP_REASONS
from exporter.sources.registry import SOURCES
from tests.conftest import FIXED_NOW, read_all

GOLDEN = Path(__file__).parents[1] / "golden" / "demo.prom"


def _repairs(snapshot: object) -> int | None:
    return snapshot.repairs if isinstance(snapshot, Reconciled) else None


def _demo_exposition(stack: DemoStack) -> Exposition:
    config = stack.config()
    records = read_all(config)
    snapshots = {name: getattr(records, name) for name in SOURCES}
    health = {
        # A source that keeps closed days reports its repairs, as the refresher adds them up.
        name: SourceHealth(True, FIXED_NOW.timestamp(), 0.25, {}, repairs=_repairs(snapshot))
        for name, snapshot in snapshots.items()
        if snapshot is not None
    }
    # The server's builder: the join and the month-end forecast from its day book.
    samples = Joiner(config)(snapshots, FIXED_NOW)
    self_samples = [*health_samples(health, DROP_REASONS), *build_error_samples({})]
    return render([*static_samples(config), *samples, *self_samples])


def test_golden_exposition(stack: DemoStack) -> None:
    text = _demo_exposition(stack).text.decode()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "run with UPDATE_GOLDEN=1 to refresh"


def test_openmetrics_and_gzip_say_the_same(stack: DemoStack) -> None:
    exposition = _demo_exposition(stack)
    assert gzip.decompress(exposition.text_gzip) == exposition.text
    assert gzip.decompress(exposition.openmetrics_gzip) == exposition.openmetrics
    assert exposition.openmetrics.endswith(b"# EOF\n")
    names = {f.name for f in om_parse(exposition.openmetrics.decode())}  # type: ignore[no-untyped-call]
    assert "chargeback_source_errors" in names and "chargeback_team_cost_per_hour" in names
