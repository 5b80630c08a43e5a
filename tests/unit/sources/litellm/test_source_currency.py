"""LiteLLM's currency: refused when it cannot be converted, converted where it enters the join."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.cli import main
from exporter.config.schema import Config, LiteLLMConfig, SourcesConfig, TeamConfig
from exporter.errors import ExchangeRateError
from exporter.exposition.catalogue.llm import (
    LLM_BUDGET_MAX,
    LLM_BUDGET_SOFT,
    LLM_BUDGET_SPEND,
    LLM_SPEND_MONTH_TO_DATE,
)
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage, TeamBudget
from exporter.sources.litellm.source import KIND, build_client, exchange_rate
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.support.litellm_rows import Row, RowProxy

NOW = datetime(2026, 11, 19, 13, 30, tzinfo=UTC)
BASE = """\
currency: EUR
teams:
  - {name: research, litellm_teams: [t-research]}
sources:
  litellm:
    url: "http://litellm:4000"
    api_key_env: TEST_LITELLM_KEY
"""


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LITELLM_KEY", "sk-test-currency")


@pytest.mark.parametrize(
    ("extra", "line", "key", "message"),
    [
        (
            "",
            5,
            "sources.litellm.currency",
            "LiteLLM reports USD but the exporter reports EUR: set sources.litellm.rate or "
            "rate_file (line 1)",
        ),
        (
            "    currency: GBP\n",
            8,
            "sources.litellm.currency",
            "LiteLLM reports GBP but the exporter reports EUR",
        ),
        (
            "    currency: EUR\n    rate: 1.1\n",
            9,
            "sources.litellm.rate",
            "LiteLLM already reports EUR, so a rate does not apply (line 8)",
        ),
        (
            "    rate: 0.9\n    rate_file: /etc/rate\n",
            9,
            "sources.litellm.rate_file",
            "set rate or rate_file, not both (line 8)",
        ),
        ("    rate: 0\n", 8, "sources.litellm.rate", "greater than 0"),
    ],
)
def test_a_config_that_cannot_convert_is_refused_with_file_line_and_key(
    write_config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    extra: str,
    line: int,
    key: str,
    message: str,
) -> None:
    path = write_config(BASE + extra)
    assert main(["--config.file", path, "--check-config"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}: {key}: " in err
    assert message in err


def test_a_rate_or_equal_currencies_are_accepted(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in ("    rate: 0.92\n", "    rate_file: /etc/rate\n", "    currency: EUR\n"):
        assert main(["--config.file", write_config(BASE + extra), "--check-config"]) == 0
    capsys.readouterr()


def _cfg(**kw: Any) -> LiteLLMConfig:
    return LiteLLMConfig(url="http://litellm:4000", api_key_env="TEST_LITELLM_KEY", **kw)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "No such file or directory"),
        ("", "expected one number"),
        ("0.92 EUR\n", "expected one number"),
        ("0\n", "0 is not a usable rate"),
        ("nan\n", "nan is not a usable rate"),
        ("-1.5\n", "-1.5 is not a usable rate"),
        ("9" * 300, "expected one number"),
    ],
)
def test_a_bad_rate_file_fails_the_refresh_with_its_reason(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    rate_file = tmp_path / "usd-eur"
    if content is not None:
        rate_file.write_text(content, encoding="utf-8")
    with pytest.raises(ExchangeRateError) as caught:
        exchange_rate(_cfg(rate_file=str(rate_file)))
    assert caught.value.reason == "exchange_rate"
    assert str(caught.value).startswith(f"litellm: rate file {rate_file}: ")
    assert problem in str(caught.value)


def test_the_rate_file_is_read_on_every_refresh(tmp_path: Path) -> None:
    rate_file = tmp_path / "usd-eur"
    rate_file.write_text("0.92\n", encoding="utf-8")
    cfg = _cfg(rate_file=str(rate_file))
    config = Config(sources=SourcesConfig(litellm=cfg))
    proxy = RowProxy([Row("t", "2026-11-02", "k", "m", "m", 1, 1, 1, 10.0)])
    with build_client(cfg, transport=httpx.MockTransport(proxy)) as client:
        first = KIND.fetch_from_config(client, config, Reading.open(NOW, config.zone))
        rate_file.write_text(" 0.5 ", encoding="utf-8")
        second = KIND.fetch_from_config(client, config, Reading.open(NOW, config.zone))
        rate_file.unlink()
        with pytest.raises(ExchangeRateError):
            KIND.fetch_from_config(client, config, Reading.open(NOW, config.zone))
    assert (first.exchange_rate, second.exchange_rate) == (0.92, 0.5)
    # Amounts stay in LiteLLM's currency in the snapshot, and convert once.
    assert first.usage[0].spend == 10.0
    assert first.converted().usage[0].spend == pytest.approx(9.2)
    assert first.converted().converted() == first.converted()


def test_spend_and_budgets_are_converted_where_they_enter_the_join() -> None:
    # By hand, at 0.9 EUR per USD: spend 12.50 -> 11.25, cap 100 -> 90, soft 80 -> 72, and
    # month-to-date model spend 4.00 -> 3.60.
    config = Config(
        currency="EUR",
        teams=(TeamConfig(name="research", litellm_teams=("t-research",)),),
        sources=SourcesConfig(litellm=_cfg(rate=0.9)),
    )
    budget = TeamBudget("t-research", "Research", 12.5, 100.0, 80.0, None)
    use = ModelUsage("t-research", "Research", "gpt-4o", 4.0, 10, 5, 1, deployment="gpt-4o-x")
    snapshot = LiteLLMSnapshot((budget,), (use,), exchange_rate=0.9)
    result = join(
        config, Attributor(config), Snapshots(litellm=snapshot), Reading.open(NOW, config.zone)
    )
    values = {(s.family.name, s.labels): s.value for s in series(result)}
    team = (("team", "research"),)
    assert values[(LLM_BUDGET_SPEND.name, team)] == pytest.approx(11.25)
    assert values[(LLM_BUDGET_MAX.name, team)] == pytest.approx(90.0)
    assert values[(LLM_BUDGET_SOFT.name, team)] == pytest.approx(72.0)
    spend = values[(LLM_SPEND_MONTH_TO_DATE.name, (("team", "research"), ("model", "gpt-4o")))]
    assert spend == pytest.approx(3.6)
