"""The vLLM source and measured completion weights in config: defaults, bounds, file:line errors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from exporter.config.schema import load_config
from tests.support.configs import assert_first_issue

MEASURED = """\
llm_completion_weight: 3
sources:
  vllm:
    url: http://prometheus.monitoring:9090
llm_models:
  - model: llama-3-70b
    self_hosted:
      namespace: ns-search
      weight: measured
      served_model: meta-llama/Llama-3.1-70B-Instruct
  - model: mistral-7b
    self_hosted: {namespace: ns-search}
"""


def test_the_source_and_a_measured_model_load_with_their_defaults(
    write_config: Callable[[str], str],
) -> None:
    config = load_config(write_config(MEASURED))
    vllm = config.sources.vllm
    assert vllm is not None
    assert (vllm.window, vllm.min_requests, vllm.model_label) == (None, 100, "model_name")
    assert (vllm.min_tokens, vllm.min_weight, vllm.max_weight) == (1000, 1.0, 500.0)
    assert (vllm.interval, vllm.max_staleness) == (timedelta(minutes=5), timedelta(minutes=30))
    llama, mistral = (m.self_hosted for m in config.llm_models)
    assert llama is not None and mistral is not None
    assert (llama.weight, llama.served_model) == ("measured", "meta-llama/Llama-3.1-70B-Instruct")
    assert (mistral.weight, mistral.served_model) == ("configured", None)


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (
            MEASURED.replace("sources:\n  vllm:\n    url: http://prometheus.monitoring:9090\n", ""),
            6,
            "llm_models[0].self_hosted.weight",
            "measured needs sources.vllm",
        ),
        (
            MEASURED.replace("weight: measured", "weight: guessed"),
            9,
            "llm_models[0].self_hosted.weight",
            "configured",
        ),
        (MEASURED.replace("9090\n", "9090\n    window: 10m\n"), 5, "sources.vllm.window", "1h"),
        (
            MEASURED.replace("9090\n", "9090\n    min_requests: 0\n"),
            5,
            "sources.vllm.min_requests",
            "greater than or equal to 1",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    min_tokens: 0\n"),
            5,
            "sources.vllm.min_tokens",
            "greater than or equal to 1",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    min_weight: 0.5\n"),
            5,
            "sources.vllm.min_weight",
            "greater than or equal to 1",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    max_weight: .nan\n"),
            5,
            "sources.vllm.max_weight",
            "finite",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    min_weight: 100\n    max_weight: 50\n"),
            6,
            "sources.vllm.max_weight",
            "must be above min_weight (100)",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    weight_band: [1, 200]\n"),
            5,
            "sources.vllm.weight_band",
            "",
        ),
        (
            MEASURED.replace("9090\n", "9090\n    model_label: model-name\n"),
            5,
            "sources.vllm.model_label",
            "pattern",
        ),
    ],
)
def test_errors_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)
