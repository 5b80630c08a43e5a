"""Which models the cap folds: declared kept, the rest by spend, the same cut in any order."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from exporter.config.schema import Config
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.llm.model_cap import models_over_cap
from exporter.ledger.result import Chargeback
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots


def _use(spend: float | None) -> TeamModelUsage:
    return TeamModelUsage(spend=spend, prompt_tokens=10, completion_tokens=5, requests=1)


USAGE = {
    ("a", "big"): _use(50.0),
    ("b", "big"): _use(50.0),  # 100 in all: the costliest
    ("a", "mid"): _use(60.0),
    ("a", "small"): _use(1.0),
    ("b", "tiny"): _use(0.5),
    ("b", "unknown"): _use(None),  # no spend reported: ranks as nothing spent
    ("c", "declared"): _use(0.0),
}


def test_keeps_the_costliest_models_across_teams() -> None:
    assert models_over_cap(USAGE, (), 2) == ("declared", "small", "tiny", "unknown")


def test_declared_models_are_kept_and_take_room() -> None:
    assert models_over_cap(USAGE, ("declared",), 2) == ("mid", "small", "tiny", "unknown")


def test_declared_but_unused_models_take_no_room() -> None:
    assert models_over_cap(USAGE, ("never-seen",), 2) == ("declared", "small", "tiny", "unknown")


def test_nothing_folds_under_the_cap() -> None:
    assert models_over_cap(USAGE, (), 6) == ()
    assert models_over_cap({}, ("declared",), 1) == ()


def test_a_model_named_like_the_fold_joins_it_once_anything_folds() -> None:
    usage = {("t", "__other__"): _use(99.0), ("t", "a"): _use(2.0), ("t", "b"): _use(1.0)}
    assert models_over_cap(usage, (), 2) == ("__other__", "b")
    assert models_over_cap(usage, (), 3) == ()


def test_ties_break_by_name_whatever_the_order_upstream_gave() -> None:
    usage = {("t", f"m{i}"): _use(1.0) for i in range(6)}
    items = list(usage.items())
    random.Random(7).shuffle(items)
    assert models_over_cap(dict(items), (), 2) == ("m2", "m3", "m4", "m5")


# --- through the join: the series fold, the typed result keeps every model --------------------

NOW = datetime(2026, 11, 15, 12, tzinfo=UTC)
SPEND = {"m0": 9.0, "m1": 7.0, "m2": 0.25, "m3": 0.5, "declared": 0.0}


def _join(max_models: int, seed: int) -> Chargeback:
    config = Config.model_validate(
        {
            "teams": [{"name": "a", "litellm_teams": ["id-a"]}, {"name": "b"}],
            "attribution": {"max_models": max_models},
            "llm_models": [{"model": "declared", "external": True}],
        }
    )
    usage = [
        ModelUsage(team, None, model, spend, 100, 50, 3)
        for team in ("id-a", "b")
        for model, spend in SPEND.items()
    ]
    random.Random(seed).shuffle(usage)
    snapshot = LiteLLMSnapshot(teams=(), usage=tuple(usage))
    reading = Reading.open(NOW, config.zone)
    return join(config, Attributor(config), Snapshots(litellm=snapshot), reading)


def _spend_series(chargeback: Chargeback) -> dict[tuple[str, str], float]:
    out = {}
    for s in series(chargeback):
        if s.family.base == "llm_spend_month_to_date":
            labels = dict(s.labels)
            out[(labels["team"], labels["model"])] = s.value
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_the_join_folds_the_series_and_keeps_every_model_for_the_report(seed: int) -> None:
    chargeback = _join(3, seed)
    assert chargeback.llm is not None
    assert chargeback.llm.folded_models == ("m2", "m3")  # declared, then m0 and m1 by spend
    assert len(chargeback.llm.usage) == 2 * len(SPEND)  # the report reads every pair
    got = _spend_series(chargeback)
    assert sorted({model for _, model in got}) == ["__other__", "declared", "m0", "m1"]
    for team in ("a", "b"):
        assert got[(team, "__other__")] == 0.75
        whole = sum(u.spend or 0.0 for (t, _), u in chargeback.llm.usage.items() if t == team)
        assert sum(v for (t, _), v in got.items() if t == team) == pytest.approx(whole)
    over = [s.value for s in series(chargeback) if s.family.base == "llm_models_over_cap"]
    assert over == [2.0]


def test_a_cap_every_model_fits_under_serves_them_all() -> None:
    chargeback = _join(10, 1)
    assert chargeback.llm is not None and chargeback.llm.folded_models == ()
    assert {model for _, model in _spend_series(chargeback)} == set(SPEND)
