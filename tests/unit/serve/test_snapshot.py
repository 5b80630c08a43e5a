"""Snapshots through the refresher: drops are counted, a contradicting snapshot is refused."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
import pytest

from exporter.config.schema import Config, LiteLLMConfig, SourcesConfig
from exporter.errors import RecordsDropped, UpstreamIncomplete
from exporter.serve.refresher import Refresher
from exporter.serve.schedule import Source
from exporter.sources.litellm import source as litellm
from exporter.sources.litellm.teams import TEAM_LIST
from exporter.sources.reading import Reading
from tests.conftest import CLOCK
from tests.unit.serve.scripted import as_budgets, scripted


@dataclass(frozen=True)
class _Audited:
    value: float
    dropped: Mapping[str, int] = field(default_factory=dict)

    def __float__(self) -> float:
        return self.value

    def check_after(self, previous: object | None) -> None:
        # Stands in for "empty where the last good read had data".
        if self.value == 0 and isinstance(previous, _Audited) and previous.value:
            raise UpstreamIncomplete("s: empty after data")


def test_drops_are_pre_initialised_and_accumulate_over_accepted_refreshes() -> None:
    result: list[object] = [_Audited(1.0)]
    refresher = Refresher([scripted("s", result)], as_budgets)
    refresher.refresh_all()
    text = refresher.exposition.text
    for reason in ("duplicate", "missing_field", "non_finite", "out_of_range", "wrong_type"):
        line = f'chargeback_source_records_dropped_total{{reason="{reason}",source="s"}} 0.0'
        assert line.encode() in text
    assert b'chargeback_source_errors_total{reason="incomplete",source="s"} 0.0' in text
    result[0] = _Audited(2.0, {"non_finite": 2, "duplicate": 1})
    refresher.refresh_all()
    result[0] = _Audited(3.0, {"non_finite": 1})
    refresher.refresh_all()
    assert refresher.health()["s"].dropped == {"non_finite": 3, "duplicate": 1}
    # A refused snapshot's drops are not counted: it was never served.
    result[0] = _Audited(0.0, {"out_of_range": 5})
    assert not refresher.refresh("s")
    assert refresher.health()["s"].dropped == {"non_finite": 3, "duplicate": 1}


def test_a_read_that_dropped_records_is_refused_and_its_drops_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    result: list[object] = [4.0]
    refresher = Refresher([scripted("s", result)], as_budgets)
    assert refresher.refresh_all()
    result[0] = RecordsDropped("s: rows dropped: 2 (2 non_finite; first: spend)", {"non_finite": 2})
    with caplog.at_level(logging.WARNING):
        assert not refresher.refresh_all()
    health = refresher.health()["s"]
    assert not health.up and health.errors == {"malformed": 1}
    assert health.dropped == {"non_finite": 2}
    assert refresher.fresh_records() == {"s": 4.0}  # the last complete read stays
    assert "source=s refresh failed reason=malformed" in caplog.text and "dropped" in caplog.text


def test_a_snapshot_contradicting_the_last_good_one_is_refused() -> None:
    result: list[object] = [_Audited(4.0)]
    refresher = Refresher([scripted("s", result)], as_budgets)
    assert refresher.refresh_all()
    result[0] = _Audited(0.0)
    assert not refresher.refresh_all()
    health = refresher.health()["s"]
    assert not health.up and health.errors == {"incomplete": 1}
    assert refresher.fresh_records() == {"s": _Audited(4.0)}  # the last complete read stays
    assert b'chargeback_team_budget{kind="gpu",team="s"} 4.0' in refresher.exposition.text
    assert b'chargeback_source_up{source="s"} 0.0' in refresher.exposition.text


def test_overlapping_litellm_pages_through_the_refresher() -> None:
    """The real LiteLLM fetch over MockTransport: a team created mid-read fails the refresh."""
    created = [False]

    def proxy(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", "1"))
        teams = [{"team_id": t, "spend": 5.0} for t in ("b", "a")]
        if created[0] and page == 2:  # "n" was created after page 1: everything shifts down
            teams = [{"team_id": "n", "spend": 0.0}, *teams]
        total = len(teams)
        chunk = teams[(page - 1) : page] if request.url.path == TEAM_LIST else []
        if request.url.path != TEAM_LIST:
            return httpx.Response(200, json={"results": [], "metadata": {}})
        return httpx.Response(
            200, json={"teams": chunk, "total": total, "page": page, "total_pages": total}
        )

    cfg = LiteLLMConfig(
        url="http://proxy", api_key_env="LITELLM_TEST_KEY", page_size=1, currency="EUR"
    )
    config = Config(sources=SourcesConfig(litellm=cfg))
    client = httpx.Client(base_url="http://proxy", transport=httpx.MockTransport(proxy))
    source = Source(
        "litellm",
        60,
        600,
        lambda now: litellm.KIND.fetch_from_config(client, config, Reading.open(now, config.zone)),
    )
    refresher = Refresher([source], lambda records, now: [], clock=CLOCK)
    assert refresher.refresh_all()
    good = refresher.fresh_records()["litellm"]
    created[0] = True
    assert not refresher.refresh_all()
    health = refresher.health()["litellm"]
    assert not health.up and health.errors == {"incomplete": 1}
    assert refresher.fresh_records()["litellm"] is good
    assert [t.team_id for t in good.teams] == ["b", "a"]  # type: ignore[attr-defined]
    client.close()
