"""vLLM's request histograms in Prometheus: the PromQL that totals them per model, and its reading.

vLLM observes each finished request once into `vllm:request_prefill_time_seconds`,
`vllm:request_decode_time_seconds`, `vllm:request_prompt_tokens` and
`vllm:request_generation_tokens` (docs/sources/vllm.md). Their `_sum` series are counters, so
the time and tokens of the requests finished in a span are `increase(<name>_sum[<span>])`,
summed over every engine, pod and replica of a model:

    sum by (model_name) (increase(vllm:request_prefill_time_seconds_sum[<span>]))

One query per measure, all at the same instant over the same span: each is extrapolated by
Prometheus over the same samples, so their ratios are as exact as the counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

import httpx

from exporter.config.schema import format_duration
from exporter.sources.checks import (
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    BadRecord,
    Tally,
    label,
)
from exporter.sources.prometheus_api import instant_vector

__all__ = ["MEASURES", "query_expr", "read_totals", "totals_by_model"]

SOURCE = "vllm"
# What is totalled per model, and the counter each measure is read from.
MEASURES: Mapping[str, str] = {
    "prefill_seconds": "vllm:request_prefill_time_seconds_sum",
    "decode_seconds": "vllm:request_decode_time_seconds_sum",
    "prompt_tokens": "vllm:request_prompt_tokens_sum",
    "generation_tokens": "vllm:request_generation_tokens_sum",
    "requests": "vllm:request_prefill_time_seconds_count",
}

Vector = list[tuple[dict[str, str], float]]


def query_expr(counter: str, span: timedelta, model_label: str) -> str:
    """The PromQL for one counter's increase over `span`, per model."""
    return f"sum by ({model_label}) (increase({counter}[{format_duration(span)}]))"


def read_totals(
    client: httpx.Client, span: timedelta, at: datetime, model_label: str
) -> dict[str, Vector]:
    """Every measure's vector over the `span` ending at `at`, keyed by measure."""
    return {
        measure: instant_vector(client, SOURCE, query_expr(counter, span, model_label), at)
        for measure, counter in MEASURES.items()
    }


def totals_by_model(
    vectors: Mapping[str, Vector], model_label: str, tally: Tally
) -> dict[str, dict[str, float]]:
    """Per model, every measure: a model missing one, or with a value that is not a finite
    non-negative number, is dropped and counted (its weight falls back to the configured one)."""
    found: dict[str, dict[str, float]] = {}
    bad: set[str] = set()
    for measure in MEASURES:
        for labels, value in vectors.get(measure, []):
            try:
                model = _model(labels, model_label)
            except BadRecord as exc:
                tally.drop(exc)
                continue
            try:
                found.setdefault(model, {})[measure] = _value(value, f"{model} {measure}")
            except BadRecord as exc:
                tally.drop(exc)
                bad.add(model)
    out: dict[str, dict[str, float]] = {}
    for model in sorted(found.keys() - bad):
        missing = [m for m in MEASURES if m not in found[model]]
        if missing:
            tally.drop(BadRecord(MISSING_FIELD, f"{model}: no {', '.join(missing)}"))
            continue
        out[model] = found[model]
    return out


def _model(labels: Mapping[str, str], model_label: str) -> str:
    if model_label not in labels:
        raise BadRecord(MISSING_FIELD, f"a series has no {model_label} label")
    return label(labels[model_label], model_label)


def _value(value: float, what: str) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        raise BadRecord(NON_FINITE, f"{what} is not finite")
    if value < 0:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {value:g}, below 0")
    return value
