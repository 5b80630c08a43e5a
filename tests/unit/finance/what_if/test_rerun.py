"""The month joined again under a what-if: the seed's month moved from sharing idle to charging
quota holders (docs/what-if.md), a price, a quota and a throughput, each worked by hand."""

from __future__ import annotations

import csv
import io
import json

import pytest

from exporter.config.schema import IdlePolicy
from exporter.finance.command import ReportRequest, print_month
from exporter.finance.month_read import MonthRead
from exporter.finance.what_if.keys import parse_what_if
from exporter.finance.what_if.rerun import rerun
from exporter.ledger.attribution import IDLE, UNALLOCATED, Attributor
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage
from exporter.sources.reading import Reading
from tests.support.seed_month import (
    H100,
    NOVEMBER,
    SEED,
    SeedMonth,
    month_config,
    month_snapshots,
)

READING = Reading.closed_month(NOVEMBER)
TEAMS = ["a", "b", "c"]


def _print(request: ReportRequest, capsys: pytest.CaptureFixture[str]) -> str:
    config = month_config(IdlePolicy.PROPORTIONAL, TEAMS)
    snapshots = month_snapshots(SEED)
    read = MonthRead({"opencost": snapshots.opencost, "kueue": snapshots.kueue}, ())
    assert print_month(config, read, READING, request) == 0
    return capsys.readouterr().out


def _asked(fmt: str, *what_if: str) -> ReportRequest:
    return ReportRequest(fmt, "teams", month="2026-11", what_if=what_if)


def test_the_seed_under_reservation_prints_the_seeds_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Proportional: each team pays its 1.40 GPU-hours plus the 1,562.40 idle by usage
    # (A 1,512.00 + 956.57); reservation: nominal x 720 x 1.40 (A 2 GPUs: 2,016.00).
    out = _print(_asked("table", "idle_policy=reservation"), capsys)
    what_if = out[out.index("What if: idle_policy=reservation") :]
    assert "Idle policy: proportional before, reservation after" in what_if
    rows = {line.split()[0]: line.split()[1:] for line in what_if.splitlines()[3:]}
    assert rows["a"] == ["2,468.57", "2,016.00", "-452.57"]
    assert rows["b"] == ["987.43", "1,008.00", "20.57"]
    assert rows["c"] == ["576.00", "1,008.00", "432.00"]
    assert rows["Total"] == ["4,032.00", "4,032.00", "0.00"]


def test_every_format_carries_the_what_if(capsys: pytest.CaptureFixture[str]) -> None:
    payload = json.loads(_print(_asked("json", "idle_policy=reservation"), capsys))
    assert payload["teams"][0]["total"] == 2468.57  # the month as charged, unchanged
    teams = {t["team"]: (t["before"], t["after"]) for t in payload["what_if"]["teams"]}
    assert teams == {
        "a": (2468.57, 2016.0),
        "b": (987.43, 1008.0),
        "c": (576.0, 1008.0),
        IDLE: (0.0, 0.0),
        UNALLOCATED: (0.0, 0.0),
    }
    assert payload["what_if"]["total"] == {"before": 4032.0, "after": 4032.0, "difference": 0.0}
    rows = list(csv.reader(io.StringIO(_print(_asked("csv", "idle_policy=reservation"), capsys))))
    assert rows[0] == ["team", "before", "after", "difference", "currency"]
    assert rows[1] == ["a", "2468.57", "2016.00", "-452.57", "EUR"]
    assert rows[-1] == ["total", "4032.00", "4032.00", "0.00", "EUR"]
    page = _print(_asked("html", "idle_policy=reservation"), capsys)
    section = page[page.index("<caption>What if: idle_policy=reservation: each team") :]
    cells = ("2,468.57", "2,016.00", "-452.57")
    assert '<th scope="row">a</th>' + "".join(f'<td class="num">{c}</td>' for c in cells) in section
    assert '<p class="note">Idle policy: proportional before, reservation after</p>' in page


def test_one_teams_what_if_is_its_own_row(capsys: pytest.CaptureFixture[str]) -> None:
    request = ReportRequest("csv", "teams", month="2026-11", team="c", what_if=("quota.cq-c=2",))
    rows = list(csv.reader(io.StringIO(_print(request, capsys))))
    # Under proportional a quota changes nothing: C pays for what it used.
    assert rows[1:] == [
        ["c", "576.00", "576.00", "0.00", "EUR"],
        ["total", "576.00", "576.00", "0.00", "EUR"],
    ]


def _rerun(policy: IdlePolicy, month: SeedMonth, *settings: str, **extra: object) -> Chargeback:
    config = month_config(policy, TEAMS, **extra)
    latest = month_snapshots(month)
    before = join(config, Attributor(config), latest, READING)
    return rerun(parse_what_if(settings, config, latest), config, latest, before).after


def _totals(result: Chargeback) -> dict[str, float]:
    assert result.month is not None
    return {t: round(sum(c.values()), 2) for t, c in result.month.by_team().items()}


def test_a_quota_given_back_moves_its_reservation_to_idle() -> None:
    # A holds 1 GPU rather than 2: it pays 1,008.00 and 504.00 for the 360 hours it used
    # beyond it, which B and C lent from their unused 288 and 468 hours: B is credited
    # 360 x 288 / 756 x 1.40 = 192.00, C 312.00. The GPU A gave back (1,008.00) is idle.
    after = _totals(_rerun(IdlePolicy.RESERVATION, SEED, "quota.cq-a=1"))
    assert (after["a"], after["b"], after["c"], after[IDLE]) == (1512.0, 816.0, 696.0, 1008.0)


def test_a_model_price_reprices_every_gpu_hour() -> None:
    # At 2.00 a GPU-hour the cluster costs 5,760.00; proportional shares it by usage.
    after = _totals(_rerun(IdlePolicy.PROPORTIONAL, SEED, f"gpu_price.{H100}=2"))
    assert round(sum(after.values()), 2) == 5760.0
    assert after["a"] == round(5760 * 1080 / 1764, 2)


def test_a_flavor_price_and_a_model_spelled_as_the_node_label_both_apply() -> None:
    flavor = _totals(_rerun(IdlePolicy.RESERVATION, SEED, "gpu_flavor_price.h100=2"))
    assert (flavor["a"], flavor["b"], flavor["c"]) == (2880.0, 1440.0, 1440.0)
    label = _totals(_rerun(IdlePolicy.SEPARATE, SEED, "gpu_price.nvidia-h100-80gb-hbm3=1"))
    assert (label["a"], label[IDLE]) == (1080.0, 1116.0)


# A self-hosted model served from ns-serve on 480 of the month's GPU-hours: 3,456,000,000
# tokens over 480 x 3,600 s is 2,000 tokens/s per GPU. At 2,800 the same tokens take
# 480 x 2,000 / 2,800 = 342.86 GPU-hours; 137.14 (192.00 at 1.40) become idle.
SERVED = SeedMonth(
    {"a": 1080.0, "b": 432.0, "c": 252.0},
    {"a": 2.0, "b": 1.0, "c": 1.0},
    4,
    1.40,
    serving={"ns-serve": 480.0},
)
LLM = LiteLLMSnapshot(
    (),
    (
        ModelUsage("a", None, "llama", 0.0, 1_000_000_000, 1_000_000_000, 10),
        ModelUsage("b", None, "llama", 0.0, 1_000_000_000, 456_000_000, 10),
    ),
)
SERVING = {"llm_models": [{"model": "llama", "self_hosted": {"namespace": "ns-serve"}}]}


def _served(*settings: str) -> tuple[Chargeback, Chargeback, tuple[str, ...]]:
    config = month_config(IdlePolicy.SEPARATE, [*TEAMS, "serve"], **SERVING)
    latest = month_snapshots(SERVED, LLM)
    before = join(config, Attributor(config), latest, READING)
    again = rerun(parse_what_if(settings, config, latest), config, latest, before)
    return before, again.after, again.notes


def test_serving_at_2800_tokens_a_second_rather_than_2000() -> None:
    before, after, notes = _served("tokens_per_second.llama=2800")
    assert notes == (
        "tokens_per_second.llama: the month served llama at 2,000 tokens/s per GPU in "
        "ns-serve; at 2,800 its 480.0 GPU-hours would have been 342.9, the difference idle",
    )
    # docs/what-if.md's table: the serving cost (672.00) follows the weighted tokens, A 2,000M
    # of 3,456M; after, it is 480.00 and the 192.00 is idle.
    assert _totals(before) == {"a": 1900.89, "b": 887.91, "c": 352.8, "serve": 0.0, IDLE: 890.4}
    assert _totals(after) == {"a": 1789.78, "b": 807.02, "c": 352.8, "serve": 0.0, IDLE: 1082.4}
