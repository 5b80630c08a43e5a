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


_BUILD = "gpu_price_build:\n  H100:\n" + _MINIMAL + "    gpu_watts: 700\n"
_FLAVOR_BUILD = "gpu_flavor_price_build:\n  h100:\n" + _MINIMAL + "    power: measured\n"


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (_BUILD + "    pue: .nan\n", 7, "gpu_price_build.H100.pue", "finite"),
        (
            _BUILD + "    energy_price_per_kwh: .inf\n",
            7,
            "gpu_price_build.H100.energy_price_per_kwh",
            "finite",
        ),
        (
            _BUILD + "    node_operations_per_hour: -.inf\n",
            7,
            "gpu_price_build.H100.node_operations_per_hour",
            "finite",
        ),
        (
            _BUILD.replace("node_capex: 1", "node_capex: 1e300"),
            3,
            "gpu_price_build.H100.node_capex",
            "less than or equal to 10000000000000",
        ),
        (
            _BUILD + "    energy_price_per_kwh: 2e6\n",
            7,
            "gpu_price_build.H100.energy_price_per_kwh",
            "less than or equal to 1000000",
        ),
        (
            _BUILD + "    node_operations_per_hour: 1e9\n",
            7,
            "gpu_price_build.H100.node_operations_per_hour",
            "less than or equal to 100000000",
        ),
        (_BUILD + "    pue: 3.5\n", 7, "gpu_price_build.H100.pue", "less than or equal to 3"),
        (
            _FLAVOR_BUILD + "    pue: 3.01\n",
            7,
            "gpu_flavor_price_build.h100.pue",
            "less than or equal to 3",
        ),
        (
            _FLAVOR_BUILD.replace("node_capex: 1", "node_capex: .nan"),
            3,
            "gpu_flavor_price_build.h100.node_capex",
            "finite",
        ),
        # Each part in bounds, the price not: a capex spread over an hour's amortisation.
        (
            _BUILD.replace("node_capex: 1", "node_capex: 1e12").replace(
                "years: 1", "years: 0.0001"
            ),
            2,
            "gpu_price_build.H100",
            "per GPU-hour, above 10,000,000",
        ),
        (
            _FLAVOR_BUILD.replace("node_capex: 1", "node_capex: 1e9") + "    availability: 1e-6\n",
            2,
            "gpu_flavor_price_build.h100",
            "per GPU-hour, above 10,000,000",
        ),
    ],
)
def test_implausible_builds_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)


def test_the_largest_plausible_build_loads(write_config: Callable[[str], str]) -> None:
    # A 72-GPU rack at the top of every bound but PUE's foots below the GPU-hour bound.
    text = (
        "gpu_price_build:\n  rack:\n    node_capex: 1e11\n    gpus_per_node: 72\n"
        "    amortisation_years: 3\n    gpu_watts: 10000\n    pue: 3\n"
        "    energy_price_per_kwh: 1e5\n    node_operations_per_hour: 1e7\n"
    )
    build = load_config(write_config(text)).gpu_price_build["rack"]
    assert build.fixed_gpu_hour + build.nameplate_energy_gpu_hour < 10_000_000


def test_check_config_exits_2_on_a_bad_price_build(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config("gpu_price_build:\n  H100:\n" + _MINIMAL + "    pue: 0\n")
    assert main(["--config.file", path, "--check-config"]) == 2
    assert f"{path}:6: gpu_price_build.H100.pue: " in capsys.readouterr().err
