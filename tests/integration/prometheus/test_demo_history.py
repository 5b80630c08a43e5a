"""A closed month of the demo prints each team's idle GPU-hours, energy and CO2e, read back
from a real Prometheus into which the demo backfilled its exporter's own series."""

from __future__ import annotations

import html
import json
import shutil
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.exporter import HISTORY_SWITCH
from chargeback_demo.exporter import main as demo_main
from chargeback_demo.history import (
    RETENTION,
    backfill_running,
    history_prometheus,
    last_closed_month,
)
from chargeback_demo.prometheus import start_prometheus, stop, wait_ready
from chargeback_demo.stack import DemoStack
from exporter.config.schema import Config
from tests.conftest import CLOCK
from tests.support.statement_dom import read_page
from tests.support.waiting import until

pytestmark = pytest.mark.skipif(
    shutil.which("promtool") is None or shutil.which("prometheus") is None,
    reason="needs promtool and prometheus",
)

# The frozen clock's last closed month, October 2026 in Madrid: [30 Sep 22:00 UTC,
# 31 Oct 23:00 UTC), 745 hours (summer time ends on the 25th).
START, END = datetime(2026, 9, 30, 22, tzinfo=UTC), datetime(2026, 10, 31, 23, tzinfo=UTC)
PUE, GRID = 1.25, 250.0  # the demo config's H100 price build, and its grams of CO2e a kWh
IDLE_BELOW = 0.05  # sources.dcgm.idle_threshold's default, which the demo keeps
TEAMS = {"ns-research": "research", "ns-vision": "vision", "ns-search": "search"}


def _by_hand() -> dict[str, tuple[float, float, float]]:
    """(idle GPU-hours, kWh, kg CO2e) per team from the simulation's schedules and means.

    search, by hand: vLLM holds GPU 3 all 745 hours at 2 %, under the 5 % idle threshold, so
    745 idle GPU-hours; the fake dcgm-exporter draws 70 W + 600 W x 0.02 = 82 W, 102.5 W at
    the wall (PUE 1.25): 745 h x 0.1025 kW = 76.36 kWh, at 250 g a kWh 19.09 kg of CO2e.
    """
    out: dict[str, tuple[float, float, float]] = {}
    for used in CLUSTER.usage(START, END):
        w = used.workload
        if not w.gpus:
            continue
        idle = used.gpu_hours if w.utilisation < IDLE_BELOW else 0.0
        kwh = used.gpu_hours * (70.0 + 600.0 * w.utilisation) / 1000.0 * PUE
        team = TEAMS[w.namespace]
        known = out.get(team, (0.0, 0.0, 0.0))
        out[team] = (known[0] + idle, known[1] + kwh, known[2] + kwh * GRID / 1000.0)
    return out


HAND = _by_hand()


def _number(text: str) -> float:
    # es-ES, as the demo's report speaks: 1.073,00
    return float(text.replace("\u00a0", "").replace(".", "").replace(",", "."))


def _check(team: str, idle: str, kwh: str, co2e: str) -> None:
    hand_idle, hand_kwh, hand_co2e = HAND[team]
    assert _number(idle) == pytest.approx(hand_idle, abs=0.005), team
    # The utilisation wobbles a few percent around its mean (cluster.Workload.utilisation_at);
    # sampled every 5 minutes over the month it averages out to well under 0.5 %.
    assert _number(kwh) == pytest.approx(hand_kwh, rel=0.005), team
    assert _number(co2e) == pytest.approx(hand_co2e, rel=0.005), team


def test_the_hand_worked_month() -> None:
    assert HAND["search"][0] == 745.0
    assert round(HAND["search"][1], 2) == 76.36
    assert round(HAND["search"][2], 2) == 19.09
    assert HAND["research"][0] == HAND["vision"][0] == 0.0


def test_the_closed_months_report_prints_each_teams_gpu_operation(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No Prometheus named: the demo backfills one of its own for the month.
    monkeypatch.delenv("DEMO_HISTORY_PROMETHEUS", raising=False)
    monkeypatch.setenv(HISTORY_SWITCH, "on")
    assert demo_main(["report", "--month", "2026-10"], CLOCK) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    head = lines.index(
        "GPU operation, closed month (from the exporter's own series in report.prometheus)"
    )
    rows = {line.split()[0]: line.split() for line in lines[head + 4 : head + 7]}
    assert set(rows) == set(HAND)
    for team, row in rows.items():
        _check(team, row[1], row[4], row[5])


def _demo_config() -> Config:
    stack = DemoStack(clock=CLOCK).start()
    try:
        return stack.config()
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prometheus holding the demo exporter's own series of October 2026."""
    config = _demo_config()
    month = last_closed_month(CLOCK(), config)
    work = Path(tmp_path_factory.mktemp("demo-history"))
    with history_prometheus(work, CLUSTER, config, month) as url:
        yield url


def test_the_closed_months_statement_shows_them(
    history: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_HISTORY_PROMETHEUS", history)
    assert demo_main(["report", "--format", "html", "--month", "2026-10"], CLOCK) == 0
    page = capsys.readouterr().out
    assert "from the exporter's own series in report.prometheus" in html.unescape(page)
    tables = read_page(page)["tables"]
    operation = next(t for t in tables if "co2e" in " ".join(t[0]).casefold())
    header = [cell.casefold() for cell in operation[0]]
    at = {name: i for i, name in enumerate(header)}
    rows = {row[0]: row for row in operation[1:]}
    assert set(rows) == set(HAND)
    for team, row in rows.items():
        _check(team, row[at["idle gpu-hours"]], row[at["energy kwh"]], row[at["co2e kg"]])


def test_the_month_to_date_is_not_backfilled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only a closed month is: the month to date keeps saying DCGM read directly has no history.
    monkeypatch.delenv("DEMO_HISTORY_PROMETHEUS", raising=False)
    monkeypatch.setenv(HISTORY_SWITCH, "on")
    assert demo_main(["report"], CLOCK) == 0
    assert "DCGM read directly keeps no history" in capsys.readouterr().out


def test_make_demo_backfills_into_the_data_of_its_prometheus(tmp_path: Path) -> None:
    # make demo's way: the month's blocks are moved into the data folder of the Prometheus it
    # runs, which loads them on its next block reload (Prometheus checks once a minute). The
    # test starts a Prometheus on that folder rather than wait out the minute: the same blocks,
    # loaded the same way.
    config = _demo_config()
    month = last_closed_month(CLOCK(), config)
    data = tmp_path / "data"
    data.mkdir()
    said = backfill_running(tmp_path, data, CLUSTER, config, month)
    assert said.startswith("demo: 2026-10 backfilled in "), said
    proc, url = start_prometheus(tmp_path, targets=[], extra_args=[RETENTION])
    try:
        wait_ready(proc, f"{url}/-/ready")
        at = month.end.timestamp() - 0.001
        # Every 5 minutes of the 745 hours: 8,940 samples of search's idle GPUs.
        count = 'count_over_time(chargeback_gpus{team="search",state="idle"}[746h])'
        until("the backfilled block to load", lambda: _instant(url, count, at) == 8940.0, 30)
    finally:
        stop(proc)


def _instant(url: str, expr: str, at: float) -> float | None:
    query = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=5) as resp:
        result = json.load(resp)["data"]["result"]
    return float(result[0]["value"][1]) if result else None
