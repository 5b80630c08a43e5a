"""The worker's artefacts: rendered after a join with cost data, at most once a minute."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from exporter.config.schema import Config
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.serve.worker import _Artefacts, _Spec
from exporter.sources.reading import Reading
from tests.conftest import CLOCK, FIXED_NOW


def _config(opencost: str) -> Config:
    return Config.model_validate(
        {
            "currency": "EUR",
            "teams": [{"name": "research", "namespaces": ["ns-research"]}],
            "sources": {"opencost": {"url": opencost, "interval": "10m"}},
        }
    )


def test_artefacts_are_rendered_again_at_most_once_a_minute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []

    def page(config: Config, chargeback: Chargeback) -> bytes:
        made.append(chargeback.at.isoformat())
        return str(len(made)).encode()

    spec = _Spec(_config("http://127.0.0.1:9"), "config", CLOCK, 0, {"s": page})
    seconds = [1000.0]
    monkeypatch.setattr("exporter.serve.worker.time.monotonic", lambda: seconds[0])
    reading = Reading.open(FIXED_NOW, ZoneInfo("UTC"))
    chargeback = Chargeback(reading=reading, budgets={}, units=UnitEconomics())
    artefacts = _Artefacts(spec)
    assert not artefacts.render_if_due(chargeback), "no join yet"
    artefacts.outdated = True
    assert not artefacts.render_if_due(None), "a join without cost data renders nothing"
    assert artefacts.render_if_due(chargeback) and artefacts.pages == {"s": b"1"}
    artefacts.outdated = True  # joins come every few seconds
    seconds[0] += 59.0
    assert not artefacts.render_if_due(chargeback) and artefacts.pages == {"s": b"1"}
    seconds[0] += 1.0
    assert artefacts.render_if_due(chargeback) and artefacts.pages == {"s": b"2"}
    assert not artefacts.render_if_due(chargeback), "nothing new since"
    assert made == [FIXED_NOW.isoformat()] * 2


def test_a_page_without_content_is_rendered_again_at_the_next_join(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first joins after a start may come before OpenCost's costs: the page is b"" then,
    # and must be drawn at the first join with costs, not a minute later.
    made: list[bytes] = [b"", b"", b"statement"]

    def page(config: Config, chargeback: Chargeback) -> bytes:
        return made.pop(0)

    spec = _Spec(_config("http://127.0.0.1:9"), "config", CLOCK, 0, {"s": page})
    monkeypatch.setattr("exporter.serve.worker.time.monotonic", lambda: 1000.0)
    reading = Reading.open(FIXED_NOW, ZoneInfo("UTC"))
    chargeback = Chargeback(reading=reading, budgets={}, units=UnitEconomics())
    artefacts = _Artefacts(spec)
    for expected in (b"", b"", b"statement"):
        artefacts.outdated = True
        assert artefacts.render_if_due(chargeback) and artefacts.pages == {"s": expected}
    assert artefacts.rendered
    artefacts.outdated = True
    assert not artefacts.render_if_due(chargeback), "content: the minute's pause holds"
