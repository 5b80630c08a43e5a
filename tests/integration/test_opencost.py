"""The exporter against the fake OpenCost over loopback: conservation, shareIdle parity, faults."""

from __future__ import annotations

import math
from datetime import timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.calendar import month_start
from exporter.config.schema import Config
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.serve.wiring import build_sources
from exporter.sources.deadline import Backoff, RetryPolicy
from exporter.sources.opencost import source as opencost
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import CLOCK, FIXED_NOW, read_all


def _config(stack: DemoStack, **overrides: object) -> Config:
    data = demo_config_dict({"opencost": stack.urls["opencost"]})
    data.update(overrides)
    return Config.model_validate(data)


def _snapshot(stack: DemoStack, config: Config) -> opencost.OpenCostSnapshot:
    records = read_all(config).opencost
    assert records is not None
    return records


@pytest.mark.parametrize(
    ("policy", "by_node"), [("separate", False), ("proportional", False), ("proportional", True)]
)
def test_team_costs_sum_to_the_cluster_cost(stack: DemoStack, policy: str, by_node: bool) -> None:
    config = _config(stack, idle_policy=policy, idle_by_node=by_node)
    snapshot = _snapshot(stack, config)
    result = join(
        config,
        Attributor(config),
        Snapshots(opencost=snapshot),
        Reading.open(FIXED_NOW, config.zone),
    )
    assert result.month is not None and result.hourly is not None
    assert result.month.total() == pytest.approx(snapshot.month.total(), rel=1e-9)
    assert result.hourly.total() == pytest.approx(snapshot.rate.total(), rel=1e-9)
    # The month really is the month in Madrid, and the fake's cost matches the capacity.
    assert snapshot.month.start == month_start(FIXED_NOW, config.zone)
    capacity = stack.cluster.capacity_cost(snapshot.month.start, FIXED_NOW)
    assert snapshot.month.total() == pytest.approx(
        sum(capacity.values())
        + sum(
            u.pv_gib_hours * stack.cluster.pv_price + u.network_gib * stack.cluster.network_price
            for u in stack.cluster.usage(snapshot.month.start, FIXED_NOW)
        ),
        rel=1e-6,
    )


def test_proportional_matches_opencost_share_idle(stack: DemoStack) -> None:
    namespaces = sorted({w.namespace for w in stack.cluster.workloads})
    config = _config(
        stack,
        teams=[{"name": ns, "namespaces": [ns]} for ns in namespaces],
        attribution={"team_label_keys": [], "namespace_label_keys": []},
    )
    snapshot = _snapshot(stack, config)
    ours = join(
        config,
        Attributor(config),
        Snapshots(opencost=snapshot),
        Reading.open(FIXED_NOW, config.zone),
    ).month
    assert ours is not None
    window = f"{int(snapshot.month.start.timestamp())},{int(FIXED_NOW.timestamp())}"
    body = httpx.get(
        f"{stack.urls['opencost']}/allocation",
        params={
            "window": window,
            "aggregate": "namespace",
            "includeIdle": "true",
            "shareIdle": "true",
            "accumulate": "true",
        },
    ).json()
    theirs = {name: alloc["totalCost"] for name, alloc in body["data"][0].items()}
    assert "__idle__" not in theirs  # every idle resource had a user to share it with
    by_team = {team: sum(c.values()) for team, c in ours.by_team().items()}
    assert by_team.keys() == theirs.keys()
    for team, total in theirs.items():
        assert by_team[team] == pytest.approx(total, abs=1e-3)


def test_idle_by_node_uses_the_assets_endpoint(stack: DemoStack) -> None:
    config = _config(stack, idle_by_node=True)
    snapshot = _snapshot(stack, config)
    assert set(snapshot.month.node_costs) == {"gpu-node-1"}
    assert snapshot.month.node_costs["gpu-node-1"]["gpu"] == pytest.approx(
        4 * 1.40 * snapshot.month.hours, rel=1e-6
    )


def _families(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


@pytest.mark.parametrize("fault", ["500", "garbage", "html", "nulls_ok"])
def test_faults_mark_the_source_down_and_keep_serving(stack: DemoStack, fault: str) -> None:
    from exporter.serve.wiring import make_refresher

    config = _config(stack)
    sleeps: list[float] = []  # a 502 is retried: record the waits instead of sleeping them
    policy = RetryPolicy(backoff=Backoff(sleep=sleeps.append), clock=CLOCK)
    refresher = make_refresher(config, clock=CLOCK, policy=policy)
    assert refresher.refresh_all()
    good = _families(refresher.exposition.text.decode())
    stack.opencost.fault = "nulls" if fault == "nulls_ok" else fault
    ok = refresher.refresh_all()
    after = _families(refresher.exposition.text.decode())
    refresher.stop()
    if fault == "nulls_ok":  # NaN written as null is a valid OpenCost answer, not an error
        assert ok and after["chargeback_source_up"][(("source", "opencost"),)] == 1.0
        return
    assert not ok
    assert after["chargeback_source_up"][(("source", "opencost"),)] == 0.0
    reason = {"500": "http_5xx", "garbage": "malformed", "html": "http_5xx"}[fault]
    errors = after["chargeback_source_errors_total"]
    assert errors[(("reason", reason), ("source", "opencost"))] == 1.0
    assert len(sleeps) == (2 if fault == "html" else 0)
    # The last good values keep serving, unchanged, until they are stale.
    assert after["chargeback_team_cost_month_to_date"] == good["chargeback_team_cost_month_to_date"]


def test_stale_records_are_dropped(stack: DemoStack) -> None:
    from exporter.serve.refresher import Refresher
    from exporter.serve.wiring import static_samples

    config = _config(stack)
    now = [FIXED_NOW]
    attributor = Attributor(config)
    refresher = Refresher(
        build_sources(config),
        lambda records, t: series(
            join(config, attributor, Snapshots.of(records), Reading.open(t, config.zone))
        ),
        static_samples(config),
        clock=lambda: now[0],
    )
    assert refresher.refresh_all()
    assert b"chargeback_team_cost_per_hour{" in refresher.exposition.text
    stack.opencost.fault = "500"
    now[0] += timedelta(minutes=3)  # demo max_staleness is 2m
    assert not refresher.refresh_all()
    text = refresher.exposition.text.decode()
    refresher.stop()
    assert "chargeback_team_cost_per_hour{" not in text
    assert 'chargeback_source_up{source="opencost"} 0.0' in text


def test_slow_upstream_times_out(stack: DemoStack) -> None:
    data = demo_config_dict({"opencost": stack.urls["opencost"]})
    data["sources"]["opencost"]["timeout"] = "0.2s"
    config = Config.model_validate(data)
    stack.opencost.fault, stack.opencost.delay_seconds = "slow", 1.0
    from exporter.serve.wiring import make_refresher

    refresher = make_refresher(config, clock=CLOCK)
    assert not refresher.refresh_all()
    text = refresher.exposition.text.decode()
    refresher.stop()
    assert 'chargeback_source_errors_total{reason="timeout",source="opencost"} 1.0' in text
    assert math.isfinite(refresher.health()["opencost"].duration)


def test_an_empty_month_after_data_fails_and_keeps_the_last_read(stack: DemoStack) -> None:
    from exporter.serve.wiring import make_refresher

    refresher = make_refresher(_config(stack), clock=CLOCK)
    assert refresher.refresh_all()
    good = _families(refresher.exposition.text.decode())
    stack.opencost.fault = "empty"  # `data: [{}]`: no allocation, no idle
    assert not refresher.refresh_all()
    after = _families(refresher.exposition.text.decode())
    refresher.stop()
    assert after["chargeback_source_up"][(("source", "opencost"),)] == 0.0
    errors = after["chargeback_source_errors_total"]
    assert errors[(("reason", "incomplete"), ("source", "opencost"))] == 1.0
    month = after["chargeback_team_cost_month_to_date"]
    assert month == good["chargeback_team_cost_month_to_date"] and any(month.values())


def test_one_huge_allocation_takes_opencost_down_with_its_drop_counted(stack: DemoStack) -> None:
    from exporter.serve.wiring import make_refresher

    stack.opencost.fault = "huge"  # one allocation says gpuCost 1e308
    refresher = make_refresher(_config(stack), clock=CLOCK)
    assert not refresher.refresh_all()
    text = refresher.exposition.text.decode()
    refresher.stop()
    fams = _families(text)
    # Without that allocation every total it feeds would be short: nothing is served as up.
    assert fams["chargeback_source_up"][(("source", "opencost"),)] == 0.0
    errors = fams["chargeback_source_errors_total"]
    assert errors[(("reason", "malformed"), ("source", "opencost"))] == 1.0
    dropped = fams["chargeback_source_records_dropped_total"]
    assert dropped[(("reason", "out_of_range"), ("source", "opencost"))] == 1.0
    assert "chargeback_team_cost_month_to_date" not in fams
