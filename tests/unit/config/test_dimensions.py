"""Config of dimensions and shared costs: what loads, and errors naming file, line and key."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.cli import main
from exporter.config.dimensions import ShareRule
from exporter.config.schema import load_config
from tests.support.configs import assert_first_issue

GOOD = """\
teams:
  - name: search
  - name: vision
dimensions:
  - name: product
    label_keys: [producto, product]
    annotation_keys: [finops.io/product]
    namespace_label_keys: [product]
    litellm_tag_prefix: "product:"
  - name: environment
    label_keys: [entorno, env]
    max_values: 5
shared_costs:
  namespaces: [monitoring, kube-system]
  rule: fixed
  weights: {search: 2, vision: 1}
"""


def test_the_example_loads(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(GOOD))
    product, environment = config.dimensions
    assert product.litellm_tag_prefix == "product:" and product.max_values == 50
    assert environment.label_keys == ("entorno", "env") and environment.max_values == 5
    assert config.shared_costs is not None
    assert config.shared_costs.rule is ShareRule.FIXED
    assert config.shared_costs.weights == {"search": 2.0, "vision": 1.0}


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        ("dimensions:\n  - name: team\n    label_keys: [t]\n", 2, "dimensions[0].name", "already"),
        ("dimensions:\n  - name: Product\n    label_keys: [p]\n", 2, "dimensions[0].name", ""),
        ("dimensions:\n  - name: p\n", 2, "dimensions[0]", "names no key"),
        (
            "dimensions:\n  - {name: p, label_keys: [a]}\n  - {name: p, label_keys: [b]}\n",
            1,
            "dimensions",
            "repeated: p",
        ),
        (
            "dimensions:\n  - name: p\n    label_keys: [a]\n    max_values: 0\n",
            4,
            "dimensions[0].max_values",
            "",
        ),
        ("shared_costs:\n  rule: even\n", 1, "shared_costs", "names no namespace"),
        ("shared_costs:\n  namespaces: [m]\n  rule: fixed\n", 1, "shared_costs", "needs weights"),
        (
            "shared_costs:\n  namespaces: [m]\n  weights: {a: 1}\n",
            1,
            "shared_costs",
            "only to rule: fixed",
        ),
        (
            "shared_costs:\n  namespaces: [m]\n  rule: fixed\n  weights: {a: -1}\n",
            4,
            "shared_costs.weights.a",
            "",
        ),
        ("shared_costs:\n  namespaces: [m]\n  rule: random\n", 3, "shared_costs.rule", ""),
        ("teams:\n  - name: __shared__\n", 2, "teams[0].name", ""),
    ],
)
def test_errors_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)


FIXED = """\
teams:
  - name: research
  - name: vision
shared_costs:
  namespaces: [m]
  rule: fixed
  weights:
    research: 1
    {name}: 2
"""


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ghost", "'ghost' is not a declared team (declared: research, vision)"),
        ("Research", "'Research' is not a declared team; did you mean 'research'?"),
        ("__idle__", "'__idle__' is a reserved row and never receives shared cost"),
        ("__unallocated__", "reserved row"),
        ("__other__", "reserved row"),
        ("__shared__", "reserved row"),
    ],
)
def test_weights_name_declared_teams(
    write_config: Callable[[str], str], name: str, message: str
) -> None:
    # Money on a name no team declares goes to a phantom row nobody is charged for.
    path = write_config(FIXED.replace("{name}", name))
    assert_first_issue(path, 9, f"shared_costs.weights.{name}", message)


def test_weights_without_declared_teams_say_to_declare_them(
    write_config: Callable[[str], str],
) -> None:
    text = "shared_costs:\n  namespaces: [m]\n  rule: fixed\n  weights: {research: 1}\n"
    path = write_config(text)
    assert_first_issue(path, 4, "shared_costs.weights.research", "declare it under teams")


def test_check_config_exits_2(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config("dimensions:\n  - name: p\n")
    assert main(["--config.file", path, "--check-config"]) == 2
    assert f"{path}:2: dimensions[0]:" in capsys.readouterr().err


def test_report_by_an_unknown_dimension_exits_2_before_reading(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # No source is configured: the name is refused before anything is read.
    path = write_config(GOOD)
    assert main(["--config.file", path, "report", "--by", "team"]) == 2
    assert "error: --by: no dimension 'team' (product, environment)" in capsys.readouterr().err
