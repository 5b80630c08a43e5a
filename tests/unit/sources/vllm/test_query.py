"""vLLM's histograms through Prometheus: the PromQL per measure and the checks on its answer."""

from __future__ import annotations

from datetime import timedelta

from exporter.sources.checks import MISSING_FIELD, NON_FINITE, OUT_OF_RANGE, Tally
from exporter.sources.vllm.query import MEASURES, query_expr, totals_by_model


def test_the_query_sums_a_counters_increase_by_model() -> None:
    expr = query_expr("vllm:request_decode_time_seconds_sum", timedelta(days=31), "model_name")
    assert expr == ("sum by (model_name) (increase(vllm:request_decode_time_seconds_sum[31d]))")
    # Prefill and decode time, both token counts, and the requests they were observed for.
    assert set(MEASURES) == {
        "prefill_seconds",
        "decode_seconds",
        "prompt_tokens",
        "generation_tokens",
        "requests",
    }


def _all(model: str, **values: float) -> dict[str, list[tuple[dict[str, str], float]]]:
    full = dict.fromkeys(MEASURES, 1.0) | values
    return {m: [({"model_name": model}, v)] for m, v in full.items()}


def test_a_whole_model_is_kept_with_every_measure() -> None:
    tally = Tally()
    got = totals_by_model(_all("llama", prefill_seconds=2.5), "model_name", tally)
    assert got == {"llama": dict.fromkeys(MEASURES, 1.0) | {"prefill_seconds": 2.5}}
    assert tally == {}


def test_bad_models_are_dropped_and_counted_and_the_others_kept() -> None:
    vectors = _all("good")
    for measure, extra in (
        ("prefill_seconds", [({"model_name": "nan"}, float("nan"))]),
        ("decode_seconds", [({"model_name": "negative"}, -1.0)]),
        ("prompt_tokens", [({"job": "vllm"}, 3.0)]),  # no model_name: sum by lost it
        ("generation_tokens", [({"model_name": "half"}, 3.0)]),  # only one measure of five
    ):
        vectors[measure] = vectors[measure] + extra
    tally = Tally()
    got = totals_by_model(vectors, "model_name", tally)
    assert list(got) == ["good"]
    assert tally == {NON_FINITE: 1, OUT_OF_RANGE: 1, MISSING_FIELD: 2}


def test_another_model_label_is_read() -> None:
    vectors = {m: [({"served": "x"}, 4.0)] for m in MEASURES}
    assert totals_by_model(vectors, "served", Tally()) == {"x": dict.fromkeys(MEASURES, 4.0)}
