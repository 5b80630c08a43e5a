"""The YAML layer of config loading: budgets, duplicate keys, encodings, all as file:line errors."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from exporter.cli import main
from exporter.config.loader import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    load_yaml_with_lines,
    read_config_text,
)
from exporter.config.schema import load_config
from exporter.errors import ConfigError
from tests.conftest import CLOCK

# The 1.4 kB file that used to take 9 GB: nine levels of nine aliases, 9**9 strings.
BILLION_LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
BILLION_LAUGHS = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + (
    BILLION_LAUGHS
)


def issue_of(text: str) -> tuple[int | None, str, str]:
    with pytest.raises(ConfigError) as caught:
        load_yaml_with_lines("c.yaml", text)
    issue = caught.value.issues[0]
    return issue.line, issue.key, issue.message


def test_billion_laughs_is_refused_through_the_command_line(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(BILLION_LAUGHS) < 1500
    path = write_config(BILLION_LAUGHS)
    assert main(["--config.file", path, "--check-config"], CLOCK) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # Refused at the first alias that crosses the budget: *e on line 6, as item 2 of `f`.
    assert err == [
        f"error: {path}:6: f[2]: more than {MAX_NODES} values once aliases are expanded via *e"
    ]


def _fan_out(width: int, copies: int) -> str:
    return f"a: &a [{', '.join(['1'] * width)}]\nb: [{', '.join(['*a'] * copies)}]\n"


def test_the_alias_budget_counts_expanded_nodes_exactly() -> None:
    # root + key a + [width items] + key b + [copies x (1 + width)]: the budget is inclusive.
    width = 99
    copies = (MAX_NODES - (1 + 1 + 1 + width + 1 + 1)) // (1 + width)
    used = 5 + width + copies * (1 + width)
    text = _fan_out(width, copies) + "c: [" + ", ".join(["1"] * (MAX_NODES - used - 2)) + "]\n"
    data, lines = load_yaml_with_lines("c.yaml", text)
    assert len(data["b"]) == copies and len(lines) <= MAX_NODES
    _, key, message = issue_of(text.replace("c: [", "c: [1, "))
    assert key.startswith("c[") and "values once aliases are expanded" in message


def test_aliases_and_merge_keys_within_the_budget_load(write_config: Callable[[str], str]) -> None:
    text = """\
teams:
  - name: a
    budget: &budget {gpu: 100, llm: 10}
  - name: b
    budget: *budget
sources:
  opencost: &source {url: "http://opencost:9003", interval: 2m}
  litellm:
    <<: *source
    url: "http://litellm:4000"
    api_key_env: KEY
    currency: EUR
"""
    config = load_config(write_config(text))
    assert config.teams[1].budget == config.teams[0].budget
    assert config.sources.litellm is not None
    assert config.sources.litellm.url == "http://litellm:4000"
    assert config.sources.litellm.interval.total_seconds() == 120


def test_nesting_is_limited_before_python_recursion_is() -> None:
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    assert load_yaml_with_lines("c.yaml", ok)[0] is not None
    line, key, message = issue_of("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert (line, message) == (1, f"nested deeper than {MAX_DEPTH} levels")
    assert key == "a" + "[0]" * (MAX_DEPTH - 1)
    block = "".join("  " * i + f"k{i}:\n" for i in range(200))
    assert issue_of(block)[0] == MAX_DEPTH


def test_aliases_cannot_stack_depth() -> None:
    # Each line is shallow, but every alias adds the depth of what it points at.
    text = "a0: &a0 1\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 60))
    line, key, message = issue_of(text)
    assert message.startswith(f"nested deeper than {MAX_DEPTH} levels via *a")
    assert line is not None and line < 40 and key.endswith("[0]")


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    assert issue_of("teams: &a [name, *a]\n") == (
        1,
        "teams[1]",
        "alias *a refers to its own enclosing anchor",
    )


@pytest.mark.parametrize(
    ("text", "line", "key", "first"),
    [
        ("currency: EUR\nteams: []\ncurrency: USD\n", 3, "currency", 1),
        (
            "attribution:\n  strict_teams: true\n  strict_teams: false\n",
            3,
            "attribution.strict_teams",
            2,
        ),
        # yes and true are the same YAML 1.1 key, as are 1 and 0x1.
        ("gpu_prices:\n  yes: 1\n  true: 2\n", 3, "gpu_prices.true", 2),
        ("gpu_prices: {1: 1, 0x1: 2}\n", 1, "gpu_prices.0x1", 1),
    ],
)
def test_duplicate_keys_name_both_lines(text: str, line: int, key: str, first: int) -> None:
    assert issue_of(text) == (line, key, f"duplicate key, first given on line {first}")


def test_every_duplicate_is_reported_once_even_through_aliases() -> None:
    text = "x: &x {a: 1, a: 2}\ny: *x\nz: *x\n"
    with pytest.raises(ConfigError) as caught:
        load_yaml_with_lines("c.yaml", text)
    assert [(i.line, i.key) for i in caught.value.issues] == [(1, "x.a")]


def test_a_merge_may_override_on_purpose() -> None:
    data, _ = load_yaml_with_lines("c.yaml", "base: &b {a: 1}\nmine:\n  <<: *b\n  a: 2\n")
    assert data["mine"] == {"a": 2}


def test_non_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes("currency: EUR\nteams:\n  - name: équipe\n".encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    assert caught.value.lines() == [
        f"{path}:3: (top level): not UTF-8 text: byte 0xe9 at column 11 cannot be decoded"
    ]
    path.write_bytes("currency: EUR\n".encode("utf-16"))
    with pytest.raises(ConfigError, match=r":1: \(top level\): not UTF-8 text: byte 0xff"):
        load_config(str(path))


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfcurrency: USD\n")
    assert load_config(str(path)).currency == "USD"


def test_files_too_big_to_be_a_config_are_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    with pytest.raises(ConfigError, match="larger than 1024 KiB"):
        load_config(str(path))


@pytest.mark.parametrize(
    ("text", "line", "key", "needle"),
    [
        ("currency: EUR\nteams: a\x00\n", 2, "", "#x0000: special characters are not allowed"),
        ("currency: 2001-02-30\n", 1, "currency", "day is out of range for month"),
        ("attribution: {max_teams: " + "9" * 5000 + "}\n", 1, "attribution.max_teams", "digits"),
        ("timezone: !!timestamp x\n", 1, "timezone", "not a value of its tag"),
        ("a: !!python/object:os.system x\n", 1, "a", "could not determine a constructor"),
        ("a: 1\n---\nb: 2\n", 2, "", "expected a single document"),
        ("teams: [\n  - name: x\n", 2, "", "expected the node content"),
    ],
)
def test_bad_yaml_is_a_located_error(text: str, line: int, key: str, needle: str) -> None:
    got_line, got_key, message = issue_of(text)
    assert (got_line, got_key) == (line, key)
    assert message.startswith("invalid YAML: ") and needle in message


def test_a_newline_in_a_key_cannot_forge_another_error_line(
    write_config: Callable[[str], str],
) -> None:
    path = write_config('"x\\nerror: forged": 1\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.lines() == [f"{path}:1: x\\nerror: forged: unknown key"]


def test_a_config_path_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    errors: list[ConfigError] = []

    def load() -> None:
        try:
            read_config_text(str(fifo))
        except ConfigError as exc:
            errors.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "reading the config blocked on a FIFO"
    assert errors[0].lines() == [f"{fifo}: (top level): cannot read: a FIFO, not a regular file"]
