"""The joiner prices the advice history at the applied prices and serves its top per team."""

from __future__ import annotations

from datetime import UTC, datetime

from exporter.config.schema import Config
from exporter.exposition.catalogue.advice import ADVICE_SAVING, ADVICE_WITHHELD
from exporter.serve.wiring import Joiner, build_sources
from exporter.sources.dcgm_history.records import DeviceHistory, History, Spread

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
FULL = 2016


def _config(**advice: object) -> Config:
    return Config.model_validate(
        {
            "gpu_prices": {"NVIDIA H100 80GB HBM3": 1.40},
            "teams": [{"name": "search", "namespaces": ["ns-search"]}],
            "sources": {"dcgm": {"prometheus": {"url": "http://prometheus:9090"}}},
            "advice": advice,
        }
    )


def _device(pod: str, fb_peak: float, samples: int = FULL) -> DeviceHistory:
    return DeviceHistory(
        "ns-search", pod, "c", "n1", pod, f"GPU-{pod}", "NVIDIA H100 80GB HBM3", "", (),
        Spread(1, 1, fb_peak, samples), Spread(0.1, 0.1, 0.1, samples), 0.0,
    )  # fmt: skip


def test_advice_is_priced_at_the_applied_price_and_capped_per_team() -> None:
    joiner = Joiner(_config(top_n=2))
    history = History(
        7 * 86_400.0,
        300.0,
        (_device("a", 7_000), _device("b", 14_000), _device("c", 30_000), _device("d", 1, 12)),
    )
    samples = list(joiner({"advice": history}, NOW))
    chargeback = joiner.last
    assert chargeback is not None and chargeback.advice is not None
    assert len(chargeback.advice.advice) == 3  # the typed result keeps them all
    saving = {dict(s.labels)["action"]: s.value for s in samples if s.family is ADVICE_SAVING}
    # The top 2: fits 1g.10gb and 1g.20gb (1/7 each: 6/7 x 730 x 1.40); 3g.40gb is cut.
    assert saving == {"fits 1g.10gb": 876.0, "fits 1g.20gb": 876.0}
    assert {dict(s.labels)["team"] for s in samples if s.family is ADVICE_SAVING} == {"search"}
    withheld = {dict(s.labels)["reason"]: s.value for s in samples if s.family is ADVICE_WITHHELD}
    assert withheld["thin_history"] == 1.0
    assert withheld["gpu_reset"] == 0.0


def test_no_advice_series_without_its_history() -> None:
    joiner = Joiner(_config())
    samples = list(joiner({}, NOW))
    assert not [s for s in samples if s.family.name.startswith("chargeback_advice")]
    assert joiner.last is not None and joiner.last.advice is None


def test_the_history_is_a_source_of_its_own_on_its_own_schedule() -> None:
    sources = {s.name: s for s in build_sources(_config())}
    assert sources["advice"].interval == 3600.0
    assert sources["advice"].max_staleness == 3 * 3600.0
    for source in sources.values():
        source.close()


def test_the_advice_is_redone_only_when_its_history_or_prices_change() -> None:
    joiner = Joiner(_config())
    history = History(7 * 86_400.0, 300.0, (_device("a", 7_000),))
    joiner({"advice": history}, NOW)
    first = joiner.last.advice if joiner.last is not None else None
    joiner({"advice": history}, NOW)
    assert joiner.last is not None and joiner.last.advice is first
    joiner({"advice": History(7 * 86_400.0, 300.0, (_device("a", 7_000),))}, NOW)
    assert joiner.last.advice is not first
    assert joiner.last.advice == first
