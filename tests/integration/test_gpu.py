"""All four fakes joined: GPU states, quota, borrowing, and conservation under every policy."""

from __future__ import annotations

import math

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.clock import fixed_clock
from exporter.config.schema import Config
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.reading import Reading
from tests.conftest import CLOCK, FIXED_NOW, read_all


def _samples(
    stack: DemoStack, config: Config
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    result = join(
        config, Attributor(config), read_all(config), Reading.open(FIXED_NOW, config.zone)
    )
    return {(s.family.base, tuple(sorted(s.labels))): s.value for s in series(result)}


@pytest.mark.parametrize("policy", ["separate", "proportional", "reservation"])
def test_every_policy_conserves_with_all_sources(stack: DemoStack, policy: str) -> None:
    data = demo_config_dict(stack.urls, str(stack.secrets))
    data["idle_policy"] = policy
    config = Config.model_validate(data)
    records = read_all(config)
    opencost, llm = records.opencost, records.litellm
    assert opencost is not None and llm is not None
    result = join(config, Attributor(config), records, Reading.open(FIXED_NOW, config.zone))
    assert result.month is not None and result.hourly is not None
    external = math.fsum(u.spend or 0.0 for u in llm.usage if u.model == "gpt-4o")
    assert result.month.total() == pytest.approx(opencost.month.total() + external, rel=1e-9)
    rate_external = result.hourly.by_team()
    assert math.fsum(result.hourly.costs.values()) == pytest.approx(
        opencost.rate.total() / opencost.rate.hours
        + math.fsum(c.get("llm_external", 0.0) for c in rate_external.values()),
        rel=1e-9,
    )


def test_reservation_charges_the_quota_holders(stack: DemoStack) -> None:
    data = demo_config_dict(
        {k: v for k, v in stack.urls.items() if k != "litellm"}, str(stack.secrets)
    )
    data["idle_policy"] = "reservation"
    config = Config.model_validate(data)
    result = join(
        config, Attributor(config), read_all(config), Reading.open(FIXED_NOW, config.zone)
    )
    assert result.hourly is not None
    rate = result.hourly.costs
    # 12:30 UTC: each team pays its nominal quota; vision borrows the GPU research lends.
    assert rate[("research", "gpu")] == pytest.approx(2 * 1.40)
    assert rate[("vision", "gpu")] == pytest.approx(1 * 1.40)
    assert rate[("search", "gpu")] == pytest.approx(1 * 1.40)
    assert rate[("vision", "borrowed")] == pytest.approx(1.40)
    assert rate[("research", "lent")] == pytest.approx(-1.40)
    assert ("__idle__", "gpu") not in rate or rate[("__idle__", "gpu")] == pytest.approx(
        0, abs=1e-9
    )


@pytest.mark.parametrize("hour", range(24))
def test_some_team_borrows_gpu_quota_at_every_hour(hour: int) -> None:
    """The dashboards' borrowing panels have data whatever the hour the demo is shown at."""
    now = FIXED_NOW.replace(hour=hour)
    # Kueue-realistic: the cohort's nominal quota is the node, and no GPU is held twice.
    assert sum(q.gpu_nominal for q in CLUSTER.queues) == CLUSTER.gpu_count
    for index in range(CLUSTER.gpu_count):
        assert sum(1 for w in CLUSTER.workloads if index in w.gpus and w.runs_at(now)) <= 1
    demo = DemoStack(clock=fixed_clock(now)).start()
    try:
        config = demo.config()
        result = join(
            config, Attributor(config), read_all(config, now), Reading.open(now, config.zone)
        )
    finally:
        demo.stop()
    assert result.hourly is not None
    borrowed = [team for (team, c), v in result.hourly.costs.items() if c == "borrowed" and v > 0]
    assert borrowed, f"nobody borrows at {now:%H:%M} UTC"


def test_gpu_states_match_the_cluster_at_noon(stack: DemoStack) -> None:
    samples = _samples(stack, stack.config())
    # research trains on 1 GPU, vision serves and retrains on 2 (08-18 UTC), search's vLLM idles.
    assert samples[("gpus", (("state", "busy"), ("team", "research")))] == 1.0
    assert samples[("gpus", (("state", "busy"), ("team", "vision")))] == 2.0
    assert samples[("gpus", (("state", "idle"), ("team", "search")))] == 1.0
    waste = samples[("team_gpu_waste_cost_per_hour", (("team", "search"),))]
    assert waste == pytest.approx(1.40)
    util = samples[("team_gpu_utilization_ratio", (("team", "research"),))]
    assert 0.75 < util < 0.95


def test_default_gpu_budget_comes_from_quota(stack: DemoStack) -> None:
    data = demo_config_dict(
        {k: v for k, v in stack.urls.items() if k != "litellm"}, str(stack.secrets)
    )
    del data["teams"][2]["budget"]  # search: no configured budget
    config = Config.model_validate(data)
    samples = _samples(stack, config)
    # November has 720 hours in Madrid: 1 GPU of nominal quota x 1.40 x 720.
    assert samples[("team_budget", (("kind", "gpu"), ("team", "search")))] == pytest.approx(1008.0)


def test_kube_401_is_one_line_and_the_others_keep_serving(
    stack: DemoStack, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from exporter.serve.wiring import make_refresher

    (stack.secrets / "kube-token").write_text("not-the-kube-api-token\n")
    refresher = make_refresher(stack.config(), clock=CLOCK)
    with caplog.at_level(logging.WARNING):
        assert not refresher.refresh_all()
    text = refresher.exposition.text.decode()
    refresher.stop()
    assert 'chargeback_source_up{source="kueue"} 0.0' in text
    for other in ("opencost", "dcgm", "litellm"):
        assert f'chargeback_source_up{{source="{other}"}} 1.0' in text
    assert 'chargeback_source_errors_total{reason="auth",source="kueue"} 1.0' in text
    lines = [r.getMessage() for r in caplog.records if "source=kueue" in r.getMessage()]
    assert len(lines) == 1 and "HTTP 401" in lines[0]
    assert "clusterqueues" in lines[0] and "not-the-kube-api-token" not in caplog.text
    assert "chargeback_team_cost_per_hour{" in text  # the chargeback still serves
