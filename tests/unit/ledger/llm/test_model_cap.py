"""Which models the cap folds: declared kept, the rest by spend, the same cut in any order."""

from __future__ import annotations

import random

from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.llm.model_cap import models_over_cap


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


def test_ties_break_by_name_whatever_the_order_upstream_gave() -> None:
    usage = {("t", f"m{i}"): _use(1.0) for i in range(6)}
    items = list(usage.items())
    random.Random(7).shuffle(items)
    assert models_over_cap(dict(items), (), 2) == ("m2", "m3", "m4", "m5")
