"""Config for unit economics: price builds, grid intensity, a model's alternative, validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.cli import main
from exporter.config.schema import load_config
from exporter.config.unit_economics import PowerBasis
from tests.support.configs import assert_first_issue

BUILD = """\
currency: EUR
grid_co2e_grams_per_kwh: 250
gpu_price_build:
  "NVIDIA H100 80GB HBM3":
    node_capex: 140000
    gpus_per_node: 4
    amortisation_years: 4
    availability: 0.9
    gpu_watts: 700
    pue: 1.4
    energy_price_per_kwh: 0.12
    node_operations_per_hour: 0.70
gpu_flavor_price_build:
  h100.spot:
    node_capex: 100000
    gpus_per_node: 8
    amortisation_years: 5
    power: measured
llm_models:
  - model: llama-3-70b
    self_hosted: {namespace: ns-serving}
    alternative: {input_per_million: 2.5, output_per_million: 10}
  - model: mistral-7b
    self_hosted: {namespace: ns-serving}
    alternative: {litellm_model: gpt-4o-mini}
"""


def test_the_issue_example_loads(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(BUILD))
    build = config.gpu_price_build["NVIDIA H100 80GB HBM3"]
    assert (build.node_capex, build.gpus_per_node, build.pue) == (140_000, 4, 1.4)
    assert build.power is PowerBasis.NAMEPLATE
    spot = config.gpu_flavor_price_build["h100.spot"]
    assert spot.power is PowerBasis.MEASURED and spot.gpu_watts is None
    assert config.grid_co2e_grams_per_kwh == 250
    first, second = config.llm_models
    assert first.alternative is not None and first.alternative.output_per_million == 10
    assert second.alternative is not None and second.alternative.litellm_model == "gpt-4o-mini"


_MINIMAL = "    node_capex: 1\n    gpus_per_node: 1\n    amortisation_years: 1\n"


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (
            "gpu_price_build:\n  H100:\n" + _MINIMAL,
            2,
            "gpu_price_build.H100",
            "set gpu_watts, or power: measured",
        ),
        (
            "gpu_price_build:\n  H100:\n" + _MINIMAL + "    gpu_watts: 700\n"
            "    availability: 1.5\n",
            7,
            "gpu_price_build.H100.availability",
            "less than or equal to 1",
        ),
        (
            "gpu_price_build:\n  H100:\n" + _MINIMAL + "    gpu_watts: 700\n    pue: 0.9\n",
            7,
            "gpu_price_build.H100.pue",
            "greater than or equal to 1",
        ),
        (
            "gpu_price_build:\n  H100:\n" + _MINIMAL + "    gpu_watts: 700\n    watts: 700\n",
            7,
            "gpu_price_build.H100.watts",
            "unknown key",
        ),
        (
            "gpu_flavor_price_build:\n  H100:\n" + _MINIMAL + "    gpu_watts: 700\n",
            2,
            "gpu_flavor_price_build.H100",
            "is not a ResourceFlavor name",
        ),
        ("grid_co2e_grams_per_kwh: -1\n", 1, "grid_co2e_grams_per_kwh", "greater than or equal"),
        (
            "llm_models:\n  - model: gpt-4o\n    external: true\n"
            "    alternative: {litellm_model: x}\n",
            2,
            "llm_models[0]",
            "an alternative compares a self-hosted model",
        ),
        (
            "llm_models:\n  - model: m\n    self_hosted: {namespace: n}\n"
            "    alternative: {input_per_million: 1}\n",
            4,
            "llm_models[0].alternative",
            "give input_per_million and output_per_million, or litellm_model",
        ),
    ],
)
def test_bad_unit_economics_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)


def test_check_config_exits_2_on_a_bad_price_build(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config("gpu_price_build:\n  H100:\n" + _MINIMAL + "    pue: 0\n")
    assert main(["--config.file", path, "--check-config"]) == 2
    assert f"{path}:6: gpu_price_build.H100.pue: " in capsys.readouterr().err
