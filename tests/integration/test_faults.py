"""The fault suite: the real exporter against the fakes behind a fault-injecting proxy.

For every source and fault: the exporter keeps serving, the faulty source is marked down with
the reason (or, for faults that leave a valid answer, stays up with the same numbers), the other
sources are untouched, what is served still conserves money, the last good values stay until
`max_staleness`, and the exporter recovers by itself once the fault heals.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.faultproxy import FaultProxy
from chargeback_demo.stack import KUBE_TOKEN, LITELLM_KEY, DemoStack, demo_config_dict
from exporter import redact
from exporter.config.schema import Config
from exporter.serve.refresher import Refresher
from exporter.serve.server import MetricsServer
from exporter.serve.wiring import make_refresher
from tests.conftest import FIXED_NOW

SOURCES = ("opencost", "dcgm", "kueue", "litellm")
# fault -> the reason counted when the source goes down; None: the answer is still valid.
OUTCOMES: dict[str, str | None] = {
    "refused": "unreachable",
    "reset": "unreachable",
    "slow": "timeout",
    "drip": "timeout",  # each byte in time for the socket, the whole call past its deadline
    "500": "http_5xx",
    "502": "http_5xx",
    "401": "auth",
    "403": "auth",
    "429": "http_4xx",  # retried after Retry-After until the refresh deadline, then down
    "truncated": "unreachable",
    "types": "malformed",
    "nonfinite": "malformed",  # every record dropped: nothing true is left to serve
    "empty": "incomplete",  # an empty answer after data is not zero cost
    "bloat": None,
    "nested": "malformed",  # a decoder's recursion limit, said as such, without a traceback
    "not_utf8": "malformed",
}
EXCEPTIONS: dict[tuple[str, str], str | None] = {
    ("dcgm", "empty"): "malformed",  # an exposition without a single GPU series
}
# Paging faults: LiteLLM's team list pages by number (Kubernetes pages by continue token).
PAGED: dict[str, str | None] = {"overlap": "incomplete", "short": "incomplete"}
CASES = [(source, fault) for source in SOURCES for fault in sorted(OUTCOMES)]
CASES += [("litellm", fault) for fault in sorted(PAGED)]
SECRETS = (LITELLM_KEY, KUBE_TOKEN)
# Families each source feeds, whose values must stay the last good ones while it is down.
OWN = {
    "opencost": ("chargeback_team_cost_month_to_date", "chargeback_cluster_cost_per_hour"),
    "dcgm": ("chargeback_gpus", "chargeback_team_gpu_utilization_ratio"),
    "kueue": ("chargeback_quota_nominal", "chargeback_quota_borrowed"),
    "litellm": ("chargeback_llm_spend_month_to_date", "chargeback_llm_budget_spend"),
}
Series = dict[str, dict[tuple[tuple[str, str], ...], float]]


@dataclass
class Rig:
    """The fakes, one proxy in front of each, and a refresher reading through the proxies."""

    stack: DemoStack
    proxies: dict[str, FaultProxy]
    refresher: Refresher
    now: list[datetime]

    def served(self) -> Series:
        out: Series = {}
        text = self.refresher.exposition.text.decode()
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
        return out


@pytest.fixture
def rig(stack: DemoStack) -> Iterator[Rig]:
    proxies = {name: FaultProxy(stack.urls[name], delay=0.05).start() for name in SOURCES}
    data: dict[str, Any] = demo_config_dict(
        {name: p.url for name, p in proxies.items()}, str(stack.secrets)
    )
    for name in SOURCES:
        # Room for a loaded machine to serve a healthy read; "slow" waits twice as long.
        data["sources"][name]["timeout"] = "2s"
    data["sources"]["litellm"]["page_size"] = 2  # three teams: two pages
    now = [FIXED_NOW]
    refresher = make_refresher(Config.model_validate(data), clock=lambda: now[0])
    try:
        yield Rig(stack, proxies, refresher, now)
    finally:
        refresher.stop()
        for proxy in proxies.values():
            proxy.set("")
            proxy.stop()


def _up(series: Series, source: str) -> float:
    return series["chargeback_source_up"][(("source", source),)]


def _conserved(series: Series) -> None:
    """What is served adds up: team rates (LLM money excluded) equal the cluster's rate."""
    rates = series["chargeback_team_cost_per_hour"]
    hardware = math.fsum(v for k, v in rates.items() if dict(k)["component"] != "llm_external")
    assert hardware == pytest.approx(series["chargeback_cluster_cost_per_hour"][()], rel=1e-9)
    money = [v for name, fam in series.items() if "cost" in name for v in fam.values()]
    assert money and all(math.isfinite(v) for v in money)


def _reason(source: str, fault: str) -> str | None:
    if fault in PAGED:
        return PAGED[fault]
    return EXCEPTIONS.get((source, fault), OUTCOMES[fault])


@pytest.mark.parametrize(("source", "fault"), CASES)
def test_a_fault_marks_only_its_source_down_and_heals(
    rig: Rig, source: str, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    redact.install()
    assert rig.refresher.refresh_all()
    good = rig.served()
    rig.proxies[source].delay = 4.0 if fault == "slow" else 0.05
    rig.proxies[source].set(fault)
    ok = rig.refresher.refresh(source)
    rig.refresher.rebuild()
    during = rig.served()
    reason = _reason(source, fault)
    assert ok is (reason is None)
    assert _up(during, source) == (0.0 if reason else 1.0)
    errors = during["chargeback_source_errors_total"]
    if reason is not None:
        assert errors[(("reason", reason), ("source", source))] == 1.0
    # Every fault has a reason that says what happened: none is an unexpected error.
    assert errors[(("reason", "error"), ("source", source))] == 0.0
    assert "Traceback" not in caplog.text
    for other in SOURCES:
        if other != source:
            assert _up(during, other) == 1.0
    for family in OWN[source]:
        assert during[family] == good[family], f"{family} changed while {source} failed"
    _conserved(during)
    rig.proxies[source].set("")
    assert rig.refresher.refresh(source)
    rig.refresher.rebuild()
    healed = rig.served()
    assert _up(healed, source) == 1.0
    for family in OWN[source]:
        assert healed[family] == good[family]
    text = caplog.text + rig.refresher.exposition.text.decode()
    assert not [secret for secret in SECRETS if secret in text]


def test_a_429_that_clears_is_retried_within_the_same_refresh(rig: Rig) -> None:
    assert rig.refresher.refresh_all()
    proxy = rig.proxies["litellm"]
    proxy.limit = 1  # one Too Many Requests, then the proxy lets requests through
    proxy.set("429")
    before = proxy.requests
    assert rig.refresher.refresh("litellm")
    assert proxy.requests > before + 1  # the refused request was made again


@pytest.mark.parametrize("source", SOURCES)
def test_last_good_values_are_dropped_at_max_staleness(rig: Rig, source: str) -> None:
    assert rig.refresher.refresh_all()
    rig.proxies[source].set("500")
    rig.now[0] += timedelta(minutes=20)  # past every demo source's max_staleness
    assert not rig.refresher.refresh(source)
    rig.refresher.rebuild()
    served = rig.served()
    assert _up(served, source) == 0.0
    for family in OWN[source]:
        if source == "opencost" and family == "chargeback_cluster_cost_per_hour":
            assert family not in served
        elif source != "opencost":
            assert family not in served, f"{family} served after {source} went stale"


def test_scrapes_are_answered_while_a_refresh_hangs_on_a_dripping_upstream(rig: Rig) -> None:
    """A scrape sends cached bytes: it never waits for a refresh in flight (no timing asserted)."""
    assert rig.refresher.refresh_all()
    server = MetricsServer(("127.0.0.1", 0), "/metrics", lambda: rig.refresher.exposition)
    server.start()
    rig.proxies["opencost"].delay = 0.2
    rig.proxies["opencost"].set("drip")
    before = rig.proxies["opencost"].requests
    refresh = threading.Thread(target=rig.refresher.refresh, args=("opencost",))
    refresh.start()
    try:
        while rig.proxies["opencost"].requests == before:  # the dripping call is under way
            time.sleep(0.01)
        body = httpx.get(f"http://127.0.0.1:{server.port}/metrics", timeout=10).text
        assert refresh.is_alive(), "the scrape waited for the refresh"
        assert 'chargeback_source_up{source="opencost"} 1.0' in body
    finally:
        refresh.join()
        server.stop()
