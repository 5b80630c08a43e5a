"""Bad input from a bill: that bill is down with its reason (its bad records dropped and
counted), the other bill stays up, and nothing else the exporter serves changes."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.config.bills import OpenAICostsConfig
from exporter.config.schema import Config
from exporter.serve.refresher import Refresher
from exporter.serve.schedule import Source
from exporter.serve.wiring import Joiner
from exporter.sources.bills import openai_costs
from exporter.sources.bills.kinds import bill_kinds
from exporter.sources.deadline import NO_RETRY, RetryPolicy
from exporter.sources.readers import SourceReader
from exporter.sources.reading import Reading
from tests.conftest import CLOCK, FIXED_NOW

NOW = FIXED_NOW.timestamp()
DAY = int(FIXED_NOW.replace(day=2, hour=0, minute=30).timestamp()) // 86400 * 86400
HEADER = (
    "BilledCost,BillingCurrency,ChargeCategory,ChargePeriodEnd,ChargePeriodStart,ProviderName,"
    "ResourceId,ServiceCategory"
)


@dataclass
class Case:
    """One bad input: what the broken bill answers, and how its source says so."""

    name: str
    reason: str
    said: str
    dropped: dict[str, int]
    openai: Callable[[httpx.Request], httpx.Response] | None = None
    focus: Callable[[Path], None] | None = None


def _costs(value: Any, currency: str = "usd") -> Callable[[httpx.Request], httpx.Response]:
    result = {
        "object": "organization.costs.result",
        "amount": {"value": value, "currency": currency},
    }
    bucket = {"object": "bucket", "start_time": DAY, "end_time": DAY + 86400, "results": [result]}
    return lambda _: httpx.Response(
        200, json={"object": "page", "data": [bucket], "has_more": False}
    )


def _export(path: Path, header: str = HEADER, mtime: float = NOW - 3600) -> None:
    rows = io.StringIO()
    out = csv.writer(rows)
    out.writerow(header.split(","))
    out.writerow(
        [
            "5",
            "EUR",
            "Usage",
            "2026-11-03T00:00:00Z",
            "2026-11-02T00:00:00Z",
            "AWS",
            "gpu-node-1",
            "Compute",
        ][: len(header.split(","))]
    )
    (path / "focus.csv").write_text(rows.getvalue())
    os.utime(path / "focus.csv", (mtime, mtime))


CASES = [
    Case("unknown currency", "exchange_rate", "billed in JPY", {}, openai=_costs(1.0, "jpy")),
    Case(
        "negative amount",
        "malformed",
        "cost results dropped: 1",
        {"out_of_range": 1},
        openai=_costs(-2.0),
    ),
    Case(
        "non-numeric amount",
        "malformed",
        "cost results dropped: 1",
        {"wrong_type": 1},
        openai=_costs("twelve"),
    ),
    Case(
        "admin key refused",
        "auth",
        "admin key refused (401)",
        {},
        openai=lambda _: httpx.Response(
            401, json={"error": {"message": "Incorrect API key provided"}}
        ),
    ),
    Case(
        "missing mandatory columns",
        "malformed",
        "missing mandatory FOCUS column(s): BilledCost",
        {},
        focus=lambda path: _export(path, HEADER.replace("BilledCost,", "")),
    ),
    Case(
        "file still being written",
        "incomplete",
        "still being written",
        {},
        focus=lambda path: _export(path, mtime=NOW - 5),
    ),
]


def _config(folder: Path) -> Config:
    return Config.model_validate(
        {
            "currency": "EUR",
            "teams": [{"name": "research", "namespaces": ["ns-research"], "budget": {"gpu": 100}}],
            "bills": {
                "currency_rates": {"USD": 0.92},
                "sources": {
                    "openai": {"type": "openai", "admin_key_env": "TEST_BAD_INPUT_KEY"},
                    "cloud": {"type": "focus", "path": str(folder)},
                },
            },
        }
    )


def _refresher(config: Config, case: Case | None, folder: Path) -> tuple[Refresher, Joiner]:
    good_openai = _costs(1.5)
    sources = []
    for kind in bill_kinds(config):
        settings = kind.section(config)
        shared = kind.shared(config)
        if isinstance(settings, OpenAICostsConfig):
            handler = case.openai if case and case.openai else good_openai
            client = openai_costs.build_client(settings, transport=httpx.MockTransport(handler))
        else:
            (case.focus if case and case.focus else _export)(folder)
            client = kind.build_client(settings)
            shared = replace(shared, clock=lambda: NOW)  # the file's age by the test's clock
        reader = SourceReader(kind, settings, shared, client, RetryPolicy(backoff=NO_RETRY))

        def fetch(now: datetime, reader: SourceReader = reader) -> object:
            return reader.read(Reading.open(now, config.zone))

        sources.append(Source(reader.name, 60.0, 3600.0, fetch, reader.close))
    joiner = Joiner(config)
    return Refresher(sources, joiner, clock=CLOCK), joiner


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_BAD_INPUT_KEY", "sk-admin-bad-input-0123456789")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_bad_bill_is_down_with_its_reason_and_nothing_else_changes(
    tmp_path: Path, case: Case
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    healthy, healthy_joiner = _refresher(_config(good), None, good)
    broken, broken_joiner = _refresher(_config(bad), case, bad)
    assert healthy.refresh_all()
    assert not broken.refresh_all()
    which = "bills.cloud" if case.focus else "bills.openai"
    other = "bills.openai" if case.focus else "bills.cloud"
    health = broken.health()
    assert not health[which].up and health[which].errors == {case.reason: 1}
    assert health[which].dropped == case.dropped
    assert health[other].up
    assert case.said in _logged(broken, which)
    # What the exporter serves beside the bills is the same as with both bills good.
    assert _served(broken) == _served(healthy)
    assert any('team="research"' in line for line in _served(healthy))
    # The ledger is unchanged; only the reconciliation lacks the bill that is down.
    broken_last, healthy_last = broken_joiner.last, healthy_joiner.last
    assert broken_last is not None and healthy_last is not None
    assert replace(broken_last, reconciliation=None) == replace(healthy_last, reconciliation=None)
    assert broken_last.reconciliation is not None and healthy_last.reconciliation is not None
    kept = {(b.source, b.kind) for b in broken_last.reconciliation.bills}
    assert which.removeprefix("bills.") not in {source for source, _ in kept}


def _logged(refresher: Refresher, name: str) -> str:
    return refresher._states[name].last_error


def _served(refresher: Refresher) -> list[str]:
    # Beside the bills' health and the reconciliation's own bill series (which a down bill
    # rightly leaves out), everything served must be the same.
    text = refresher.exposition.text.decode()
    own = ("bills.", "duration", "chargeback_bill_")
    return [line for line in text.splitlines() if not any(word in line for word in own)]
