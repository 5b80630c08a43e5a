"""The bench's synthetic S cluster parses through the real sources (a smoke test, not a bench)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import opencost_decode, opencost_path
from bench.servers import Upstreams
from bench.synthetic import NOW, SIZES
from exporter.config.schema import load_config
from exporter.serve.wiring import build_sources
from exporter.sources.table import Snapshots


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshots]:
    cache = tmp_path_factory.mktemp("bench-cache")
    upstreams = Upstreams(SIZES["S"], cache).start()
    try:
        path = upstreams.write_config(cache / "config.json")
        snapshots = {}
        for source in build_sources(load_config(str(path)), str(path)):
            snapshots[source.name] = source.fetch(NOW)
            source.close()
        yield Snapshots.of(snapshots)
    finally:
        upstreams.stop()


def test_every_gpu_of_every_node_endpoint_is_read(records: Snapshots) -> None:
    assert records.dcgm is not None
    assert len(records.dcgm.gpus) == SIZES["S"].gpus
    assert len({gpu.node for gpu in records.dcgm.gpus}) == SIZES["S"].nodes


def test_the_merged_allocation_set_has_every_workload_and_one_idle(records: Snapshots) -> None:
    assert records.opencost is not None
    month = records.opencost.month
    assert len(month.allocations) == SIZES["S"].workloads
    assert sum(month.idle.values()) > 0


def test_kueue_and_litellm_see_every_team(records: Snapshots) -> None:
    assert records.kueue is not None and records.litellm is not None
    queues = {q.cluster_queue for q in records.kueue.queues}
    assert queues == {f"cq-team-{k}" for k in range(SIZES["S"].teams)}
    assert len(records.litellm.teams) == SIZES["S"].llm_teams


def test_a_second_read_is_served_from_the_cache_on_disk(tmp_path: Path) -> None:
    first = Upstreams(SIZES["S"], tmp_path).start()
    config = first.write_config(tmp_path / "config.json", only="kueue")
    for source in build_sources(load_config(str(config)), str(config)):
        source.fetch(NOW)
        source.close()
    first.stop()
    stored = sorted(p.name for p in (tmp_path / "S" / "kueue").iterdir())
    assert stored and any(name.endswith(".body") for name in stored)


def test_the_opencost_path_bench_reads_a_body_at_the_synthetic_instant(tmp_path: Path) -> None:
    # Spelt twice so that the path's process need not import the fakes: the two must agree.
    assert opencost_path.NOW == NOW
    path = tmp_path / "allocation.json"
    path.write_bytes(opencost_decode.body(200))
    figures = opencost_path.opencost(str(path))
    assert figures["bytes"] > 1000 and figures["cpu"] >= 0
