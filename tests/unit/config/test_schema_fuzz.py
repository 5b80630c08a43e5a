"""Config fuzzing: any mutation of a valid file loads, or fails as `file:line: key: message` lines.

The mutations are the ones that broke the loader before: byte flips, truncation, renamed keys,
swapped types, aliases (up to a billion laughs), deep nesting and other encodings. Every load
goes through the command line's `--check-config`, secrets and clients included.
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.cli import main
from exporter.config.loader import MAX_NODES, load_yaml_with_lines
from exporter.config.schema import load_config
from exporter.errors import ConfigError
from tests.conftest import CLOCK
from tests.support.properties import examples

LITELLM_KEY = "sk-fuzz-secret-2f9c1e"
KUBE_TOKEN = "kube-fuzz-token-77ab"

# Deterministic, so `make test` never turns red on a new random draw; a few hundred loads.
FUZZ = settings(
    max_examples=examples(100),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_WHERE = re.compile(r"^(?::(?P<line>[1-9][0-9]*))?: (?P<key>[^:].*?): (?P<message>.+)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

HOSTILE = [
    "&a ",
    "*a",
    "*undefined",
    "<<: *a\n",
    ".inf",
    "-.inf",
    ".nan",
    "1e999",
    "[",
    "]",
    "{",
    "}",
    ": ",
    "\t",
    "\n---\n",
    "!!python/object:os.system ",
    "!!binary ",
    "!!set ",
    "!!timestamp ",
    "2001-02-30",
    "0x",
    "9" * 5000,
    '"\\u0000"',
    '"\\n"',
    "~",
    "? ",
    "- ",
    "%YAML 1.1\n",
    "&a [&b [*a]]",
    "[" * 40 + "]" * 40,
    "[" * 3000 + "]" * 3000,
    "\u2028",
    "\ufeff",
    "0.0001ms",
    "99999999999d",
]
# Values YAML resolves to something odd: dates that do not exist, huge or non-finite numbers.
VALUES = [
    ".inf",
    ".nan",
    "1e999",
    "2001-02-30",
    "2001-12-14t21:59:43.10+99:00",
    "9" * 5000,
    "0.0001ms",
    "99999999999d",
    "*a",
    "&a [*a]",
    "[" * 3000,
    "{a: " * 3000,
    "!!binary x",
    "!!float abc",
    "!!timestamp x",
    "!!int 1.5",
    "~",
    '"sk-a\nb"',
    "0o777777777777777777777",
]
HOSTILE_BYTES = [b"\x00", b"\xff", b"\xfe\xff", b"\xed\xa0\x80", b"\xc3", b"\x85", b"\r"]
SWAPS: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    float("inf"),
    float("nan"),
    10**30,
    "",
    "x" * 300,
    [],
    {},
    [1, 2],
    {"a": 1},
    "0s",
    "1ms",
    "2d",
    "http://[::1",
]
KEYS = ["interval", "timeout", "max_staleness", "url", "urls", "name", "teams", "namespaces"]


def seed(secrets: Path) -> dict[str, Any]:
    """A valid config that touches every section, with its secrets in `secrets`."""
    return {
        "currency": "EUR",
        "timezone": "Europe/Madrid",
        "idle_policy": "proportional",
        "gpu_prices": {"nvidia-a100": 2.5},
        "teams": [
            {
                "name": "research",
                "namespaces": ["ns-research"],
                "cluster_queues": ["cq-research"],
                "litellm_teams": ["research"],
                "budget": {"gpu": 2500, "llm": 400},
            },
            {"name": "vision", "namespaces": ["ns-vision"], "budget": {"gpu": 900}},
        ],
        "attribution": {"team_label_keys": ["team"], "max_teams": 50},
        "sources": {
            "opencost": {"url": "http://opencost:9003", "interval": "5m", "rate_window": "1h"},
            "dcgm": {"urls": ["http://gpu-1:9400/metrics"], "interval": "30s"},
            "kueue": {"url": "https://k8s:6443", "token_file": str(secrets / "token")},
            "litellm": {
                "url": "http://litellm:4000",
                "api_key_file": str(secrets / "key"),
                "currency": "EUR",
            },
        },
        "llm_models": [{"model": "gpt-4o", "external": True}],
    }


def _paths(tree: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    # Shallow paths only: after a "laughs" mutation the full list would be exponential.
    out = [at]
    if len(at) < 6 and isinstance(tree, dict):
        for key, value in tree.items():
            out += _paths(value, (*at, key))
    elif len(at) < 6 and isinstance(tree, list):
        for index, value in enumerate(tree[:3]):
            out += _paths(value, (*at, index))
    return out


def _get(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        tree = tree[part]
    return tree


def _set(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(tree, path[:-1])[path[-1]] = value
    return tree


def _laughs(levels: int) -> list[Any]:
    # Shared lists: safe_dump writes each one once and refers to it with an alias after.
    lol: list[Any] = ["lol"] * 9
    for _ in range(levels):
        lol = [lol] * 9
    return lol


@st.composite
def structural(draw: st.DrawFn, secrets: Path) -> str:
    """Mutate the parsed seed (keys, types, sharing, depth) and write it back as YAML."""
    tree: Any = seed(secrets)
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(tree)
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["rename", "swap", "share", "laughs", "nest", "delete"]))
        if kind == "rename" and path and isinstance(_get(tree, path[:-1]), dict):
            parent = _get(tree, path[:-1])
            new = draw(st.sampled_from(KEYS) | st.text(max_size=8))
            parent[new] = parent.pop(path[-1])
        elif kind == "swap":
            tree = _set(tree, path, copy.deepcopy(draw(st.sampled_from(SWAPS))))
        elif kind == "share":
            source = draw(st.sampled_from(paths))
            if path[: len(source)] != source:  # never inside itself: that is no YAML file
                tree = _set(tree, path, _get(tree, source))
        elif kind == "laughs":
            tree = _set(tree, path, _laughs(draw(st.integers(1, 9))))
        elif kind == "nest":
            value = _get(tree, path)
            for _ in range(draw(st.integers(1, 60))):
                value = [value] if draw(st.booleans()) else {"k": value}
            tree = _set(tree, path, value)
        elif kind == "delete" and path:
            parent = _get(tree, path[:-1])
            del parent[path[-1]]
    return yaml.safe_dump(tree, sort_keys=False, allow_unicode=True)


@st.composite
def mutated(draw: st.DrawFn, secrets: Path) -> bytes:
    """Structural mutations, then byte-level ones: flips, cuts, hostile tokens, encodings."""
    text = draw(structural(secrets))
    data = text.encode("utf-8")
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        kinds = ["flip", "cut", "insert", "value", "value", "bytes", "dupline", "encode"]
        kind = draw(st.sampled_from(kinds))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
        elif kind == "cut":
            data = data[:at]
        elif kind == "insert":
            data = data[:at] + draw(st.sampled_from(HOSTILE)).encode("utf-8") + data[at:]
        elif kind == "value":
            # A hostile token where a value goes, so YAML resolves it (a date, a float, ...).
            lines = data.split(b"\n")
            index = draw(st.integers(0, len(lines) - 1))
            head, colon, _ = lines[index].partition(b": ")
            token = draw(st.sampled_from(VALUES)).encode("utf-8")
            lines[index] = head + (colon or b": ") + token
            data = b"\n".join(lines)
        elif kind == "bytes":
            data = data[:at] + draw(st.sampled_from(HOSTILE_BYTES)) + data[at:]
        elif kind == "dupline":
            lines = data.split(b"\n")
            line = lines[draw(st.integers(0, len(lines) - 1))]
            data = data + b"\n" + line
        elif kind == "encode":
            codec = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252"]))
            data = (
                data.decode("utf-8", "replace")
                .replace("research", "recherché")
                .encode(codec, "replace")
            )
    return data


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed's secrets, written once for every example."""
    path = tmp_path_factory.mktemp("fuzz")
    (path / "key").write_text(LITELLM_KEY + "\n", encoding="utf-8")
    (path / "token").write_text(KUBE_TOKEN + "\n", encoding="utf-8")
    return path


def check_error_lines(err: str, path: str, text_lines: int) -> None:
    """Every line is `error: file:line: key: message` (or without the line) and leaks nothing."""
    assert err, "an error without a message"
    for line in err.splitlines():
        assert line.startswith(f"error: {path}"), line
        match = _WHERE.match(line.removeprefix(f"error: {path}"))
        assert match is not None, line
        assert not _CONTROL.search(line), line
        if match["line"] is not None:
            assert int(match["line"]) <= text_lines + 1, line
        assert LITELLM_KEY not in line and KUBE_TOKEN not in line


def test_the_seed_is_valid(secrets: Path) -> None:
    path = secrets / "seed.yaml"
    path.write_text(yaml.safe_dump(seed(secrets), sort_keys=False), encoding="utf-8")
    assert load_config(str(path)).sources.litellm is not None
    assert main(["--config.file", str(path), "--check-config"], CLOCK) == 0


@FUZZ
@given(data=st.data())
def test_check_config_on_mutated_files(secrets: Path, data: st.DataObject) -> None:
    raw = data.draw(mutated(secrets))
    path = secrets / "config.yaml"
    path.write_bytes(raw)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["--config.file", str(path), "--check-config"], CLOCK)
    if status == 0:
        assert err.getvalue() == f"{path}: ok\n"
    else:
        assert status == 2
        check_error_lines(err.getvalue(), str(path), raw.count(b"\n") + 1)


@settings(FUZZ, max_examples=examples(60))
@given(data=st.data())
def test_loaded_trees_stay_within_the_budget(secrets: Path, data: st.DataObject) -> None:
    text = data.draw(structural(secrets))
    try:
        _, lines = load_yaml_with_lines("fuzz.yaml", text)
    except ConfigError as exc:
        assert all(line.startswith("fuzz.yaml") for line in exc.lines())
        return
    # One entry per expanded node at most: the walk that found them was bounded too.
    assert len(lines) <= MAX_NODES
