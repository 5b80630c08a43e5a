"""LiteLLM joined with OpenCost over loopback: no double counting, and a wrong key is one line."""

from __future__ import annotations

import logging
import math

import pytest

from chargeback_demo.stack import DemoStack
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.serve.wiring import make_refresher
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import CLOCK, FIXED_NOW, read_all


def test_litellm_on_and_off_differ_by_exactly_the_external_spend(stack: DemoStack) -> None:
    config = stack.config()
    records = read_all(config)
    llm = records.litellm
    assert llm is not None
    attributor = Attributor(config)
    with_llm = join(config, attributor, records, Reading.open(FIXED_NOW, config.zone))
    without = join(
        config,
        attributor,
        Snapshots(opencost=records.opencost),
        Reading.open(FIXED_NOW, config.zone),
    )
    assert with_llm.month is not None and without.month is not None
    external = math.fsum(u.spend or 0.0 for u in llm.usage if u.model == "gpt-4o")
    assert external > 0
    assert with_llm.month.total() - without.month.total() == pytest.approx(external, rel=1e-9)
    serving = {k: v for k, v in with_llm.month.costs.items() if k[1] == "llm_serving"}
    assert serving[("search", "llm_serving")] < 0
    assert math.fsum(serving.values()) == pytest.approx(0.0, abs=1e-9)
    # The self-hosted model's LiteLLM spend is an internal price, never added as cost.
    assert not any(k[1] == "llm_external" and v < 0 for k, v in with_llm.month.costs.items())


def test_wrong_key_is_one_clear_line_and_the_source_down(
    stack: DemoStack, caplog: pytest.LogCaptureFixture
) -> None:
    (stack.secrets / "litellm-key").write_text("sk-wrong-key-0123456789\n")
    refresher = make_refresher(stack.config(), clock=CLOCK)
    with caplog.at_level(logging.WARNING):
        assert not refresher.refresh_all()
    text = refresher.exposition.text.decode()
    refresher.stop()
    assert 'chargeback_source_up{source="litellm"} 0.0' in text
    assert 'chargeback_source_up{source="opencost"} 1.0' in text
    assert 'chargeback_source_errors_total{reason="auth",source="litellm"} 1.0' in text
    lines = [r.getMessage() for r in caplog.records if "source=litellm" in r.getMessage()]
    assert len(lines) == 1
    assert "HTTP 401" in lines[0] and "check the API key" in lines[0]
    assert "sk-wrong-key" not in caplog.text and "sk-wrong-key" not in text
