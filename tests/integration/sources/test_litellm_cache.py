"""The LiteLLM month kept across refreshes of the fake proxy: incremental reads equal full ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_litellm import make_handler
from chargeback_demo.httpfake import FakeServer
from exporter.sources.litellm.source import KIND, build_client
from exporter.sources.reading import Reading
from tests.unit.sources.litellm.test_cache import KEY, _cfg, _config, _usage


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_READ_KEY", KEY)


def test_incremental_reads_equal_full_reads_over_a_month_on_the_fake() -> None:
    now = [datetime(2026, 12, 1, 8, 30, tzinfo=UTC)]  # 00:30 on 1 December in Los Angeles
    server = FakeServer(make_handler(CLUSTER, lambda: now[0], api_key=KEY)).start()
    try:
        cfg = _cfg(server.url, reconcile_interval="7d")
        config = _config(cfg, "America/Los_Angeles")
        full_reads, steps = 0, 0
        with build_client(cfg) as kept:
            while now[0] < datetime(2027, 1, 1, 8, tzinfo=UTC):
                incremental = KIND.fetch_from_config(
                    kept, config, Reading.open(now[0], config.zone)
                )
                steps += 1
                if steps % 9 == 0 or now[0] + timedelta(hours=7) >= datetime(
                    2027, 1, 1, 8, tzinfo=UTC
                ):
                    with build_client(cfg) as fresh:
                        full = KIND.fetch_from_config(
                            fresh, config, Reading.open(now[0], config.zone)
                        )
                    assert _usage(incremental) == _usage(full), now[0]
                    assert incremental.usage, now[0]
                    full_reads += 1
                now[0] += timedelta(hours=7)
        assert full_reads >= 10 and incremental.repairs == 0
    finally:
        server.stop()
