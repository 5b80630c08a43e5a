"""Config of the team attribution: annotation keys load, and bad ones name file, line and key."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.cli import main
from exporter.config.schema import load_config
from exporter.errors import ConfigError
from exporter.ledger.attribution import Attributor, Placement

GOOD = """\
teams:
  - name: search
attribution:
  team_label_keys: [team, equipo]
  team_annotation_keys: [finops.io/team, finops_io_owner]
  namespace_annotation_keys: [finops.io/team]
"""


def test_annotation_keys_load_and_place(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(GOOD))
    a = config.attribution
    assert a.team_annotation_keys == ("finops.io/team", "finops_io_owner")
    assert a.namespace_annotation_keys == ("finops.io/team",)
    assert a.namespace_label_keys == ("team",)  # the default stays
    placed = Attributor(config).place("ns", {}, {}, {"finops_io_team": "search"})
    assert placed == Placement("search", "annotation", "finops_io_team")


def test_annotation_keys_default_to_none(write_config: Callable[[str], str]) -> None:
    a = load_config(write_config("teams:\n  - name: search\n")).attribution
    assert a.team_annotation_keys == () and a.namespace_annotation_keys == ()


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        (
            "attribution:\n  team_annotation_keys:\n    - finops.io/team\n    - 'bad key'\n",
            4,
            "attribution.team_annotation_keys[1]",
        ),
        (
            "attribution:\n  namespace_annotation_keys: ['']\n",
            2,
            "attribution.namespace_annotation_keys[0]",
        ),
        (
            "attribution:\n  team_annotation_keys:\n    - Finops.IO/team\n",
            3,
            "attribution.team_annotation_keys[0]",
        ),
        (
            "attribution:\n  team_annotation_keys:\n    - a/b/c\n",
            3,
            "attribution.team_annotation_keys[0]",
        ),
        (
            "attribution:\n  team_annotation_keys:\n    - " + "x" * 400 + "\n",
            3,
            "attribution.team_annotation_keys[0]",
        ),
        ("attribution:\n  team_annotation_keys: finops.io/team\n", 2, ""),
    ],
)
def test_bad_annotation_keys_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str
) -> None:
    path = write_config(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    issue = caught.value.issues[0]
    assert issue.line == line
    assert issue.key.startswith(key or "attribution.team_annotation_keys")
    assert caught.value.lines()[0].startswith(f"{path}:{line}: ")
    assert "x" * 100 not in issue.message  # a long key is shortened, never echoed whole


def test_check_config_exits_2(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config("attribution:\n  namespace_annotation_keys: ['finops io/team']\n")
    assert main(["--config.file", path, "--check-config"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: attribution.namespace_annotation_keys[0]:" in err
    assert "not an annotation key" in err
