"""GPU price overrides in config: by GPU model and by Kueue flavor, and their validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.cli import main
from exporter.config.schema import load_config
from tests.support.configs import assert_first_issue

PRICES = """\
currency: EUR
gpu_prices:
  "NVIDIA H100 80GB HBM3": 2.10
gpu_flavor_prices:
  l40s: 0.90
  h100.spot: 1.20
"""


def test_prices_by_model_and_by_flavor_load(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(PRICES))
    assert config.gpu_prices == {"NVIDIA H100 80GB HBM3": 2.10}
    assert config.gpu_flavor_prices == {"l40s": 0.90, "h100.spot": 1.20}
    assert load_config(write_config("currency: EUR\n")).gpu_flavor_prices == {}


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (
            "currency: EUR\ngpu_flavor_prices:\n  L40S: 0.9\n",
            3,
            "gpu_flavor_prices.L40S",
            "is not a ResourceFlavor name",
        ),
        (
            "gpu_flavor_prices:\n  l40s-: 0.9\n",
            2,
            "gpu_flavor_prices.l40s-",
            "is not a ResourceFlavor name",
        ),
        ("gpu_flavor_prices: {l40s: -1}\n", 1, "gpu_flavor_prices.l40s", "greater than or equal"),
        ("gpu_flavor_prices: {l40s: cheap}\n", 1, "gpu_flavor_prices.l40s", "number"),
        (
            'gpu_prices:\n  "NVIDIA H100 80GB HBM3": 2.1\n  nvidia-h100-80gb-hbm3: 2.5\n',
            3,
            "gpu_prices.nvidia-h100-80gb-hbm3",
            "is the same GPU model as 'NVIDIA H100 80GB HBM3'",
        ),
        ('gpu_prices: {" ": 2.1}\n', 1, "gpu_prices. ", "cannot be empty"),
        # Not finite, or a GPU-hour no currency prices so (an exponent too many).
        ("gpu_prices: {H100: .nan}\n", 1, "gpu_prices.H100", "finite"),
        ("gpu_prices: {H100: .inf}\n", 1, "gpu_prices.H100", "finite"),
        ("gpu_flavor_prices: {l40s: -.inf}\n", 1, "gpu_flavor_prices.l40s", ""),
        ("gpu_prices: {H100: 1e300}\n", 1, "gpu_prices.H100", "less than or equal to 10000000"),
        (
            "gpu_flavor_prices:\n  l40s: 0.9\n  h100: 1.0000001e7\n",
            3,
            "gpu_flavor_prices.h100",
            "less than or equal to 10000000",
        ),
    ],
)
def test_bad_price_keys_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)


def test_the_largest_plausible_price_loads(write_config: Callable[[str], str]) -> None:
    text = "gpu_prices: {H100: 1e7}\ngpu_flavor_prices: {l40s: 10000000}\n"
    config = load_config(write_config(text))
    assert config.gpu_prices["H100"] == config.gpu_flavor_prices["l40s"] == 1e7


def test_check_config_exits_2_on_a_bad_flavor_name(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config("currency: EUR\ngpu_flavor_prices:\n  A100: 1.4\n")
    assert main(["--config.file", path, "--check-config"]) == 2
    assert f"{path}:3: gpu_flavor_prices.A100: " in capsys.readouterr().err
