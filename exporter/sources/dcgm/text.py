"""dcgm-exporter's text exposition read fast: the DCGM_FI_* samples, each label block once.

dcgm-exporter prints the same label block on every family of a GPU, so a block is decoded
once per distinct text, and a value once per distinct text. Lines of other families are
checked, never decoded. The fast path only takes the plain shape dcgm-exporter writes (no
spaces around `{`, `=` or `,`, one space before the value and the optional timestamp, only
the escapes `\\\\`, `\\"` and `\\n`); on any other line the whole body goes to
prometheus_client's parser instead, so odd input is read, or refused, exactly as that
parser does. Where the two could differ (a counter family without `_total`, which the
library renames `<name>_total`) the fast path follows the library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Sample", "fast_samples", "library_samples", "read_samples"]

# (metric name, labels, value): what dcgm_parse.parse_series reads.
Sample = tuple[str, Mapping[str, str], float]

_PREFIX = "DCGM_FI_"
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*", re.ASCII)
# A quoted value: runs of plain characters between the escapes the library reads (the same
# strings as one alternative per character, matched a run at a time rather than a character).
_QUOTED = r'[^"\\]*(?:\\[\\"n][^"\\]*)*'
# A label name the library accepts under either of its validation schemes: legacy, and not
# reserved (`__` names are the library's to judge).
_PAIR = rf'(?!__)[a-zA-Z_][a-zA-Z0-9_]*="{_QUOTED}"'
_BLOCK = re.compile(rf"(?:{_PAIR},)*(?:{_PAIR})?", re.ASCII)
_PAIRS = re.compile(rf'([a-zA-Z_][a-zA-Z0-9_]*)="({_QUOTED})"', re.ASCII)
_ESCAPE = re.compile(r'\\[\\"n]')
_UNESCAPED = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
# What float() reads the same as the library (int() first, then float()); no `_`, ASCII only.
_NUMBER = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)"
_TAIL = re.compile(rf" ({_NUMBER})(?: {_NUMBER})?", re.ASCII | re.IGNORECASE)
_HELP = re.compile(r"# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*)(?: .*)?", re.ASCII | re.DOTALL)
_TYPE = re.compile(r"# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) ([a-z]+)", re.ASCII)
# The library's metric types ("untyped" is its name for unknown), and the sample names each
# family type owns; any other name starts a family of its own.
_TYPES = frozenset(
    {"counter", "gauge", "summary", "histogram", "gaugehistogram", "unknown", "info"}
    | {"stateset", "untyped"}
)
_SUFFIXES = {
    "summary": ("_count", "_sum", ""),
    "histogram": ("_count", "_sum", "_bucket"),
}


_NO_LABELS: dict[str, str] = {}


class _Unsure(Exception):
    """A line the fast path does not read with certainty: the library reads the body."""


def read_samples(text: str) -> list[Sample]:
    """The DCGM_FI_* samples of a body, in order; ValueError if it is not Prometheus text."""
    samples = fast_samples(text)
    if samples is None:
        samples = [s for s in library_samples(text) if s[0][:8].upper() == _PREFIX]
    return samples


def library_samples(text: str) -> list[Sample]:
    """Every sample of a body as prometheus_client's parser reads it (ValueError if it cannot)."""
    return [
        (sample.name, sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def fast_samples(text: str) -> list[Sample] | None:
    """The DCGM_FI_* samples of a body the fast path is sure of, or None when it is not."""
    try:
        return _Reader().read(text)
    except _Unsure:
        return None


class _Reader:
    """One body's pass: the family state the library keeps, and the caches of repeated text."""

    def __init__(self) -> None:
        self.out: list[Sample] = []
        self.family = ""  # the family named by the last HELP or TYPE line, as the library has it
        self.type = "untyped"
        self.allowed: frozenset[str] = frozenset()
        self.members: list[int] = []  # indices in `out` of the current family's samples
        self.names: dict[str, bool] = {}  # metric name -> is it DCGM_FI_*
        self.blocks: dict[str, dict[str, str]] = {}
        self.values: dict[str, float] = {}

    def read(self, text: str) -> list[Sample]:
        for line in text.split("\n"):
            if not line:
                continue
            if line[0] == "#":
                self._comment(line)
            else:
                self._sample(line)
        self._close()
        return self.out

    def _comment(self, line: str) -> None:
        if "HELP" not in line and "TYPE" not in line:
            return  # a plain comment: the library ignores it whatever it holds
        if (help_line := _HELP.fullmatch(line)) is not None:
            name = help_line[1]
            if name != self.family:
                self._start(name)
                self.type = "untyped"
                self.allowed = frozenset({name})
            return
        type_line = _TYPE.fullmatch(line)
        if type_line is None or type_line[2] not in _TYPES:
            raise _Unsure
        name, kind = type_line[1], type_line[2]
        if kind == "counter" and name == "_total":
            raise _Unsure  # the library would build a family with an empty name
        if name != self.family:
            self._start(name)
        self.type = kind
        self.allowed = frozenset(name + s for s in _SUFFIXES.get(kind, ("",)))

    def _sample(self, line: str) -> None:
        # The caches are looked up here, not in the helpers: a body is tens of thousands of
        # lines, nearly all of them hits, and a call per lookup was a third of the read.
        brace = line.find("{")
        if brace < 0:
            space = line.find(" ")
            if space < 0:
                raise _Unsure
            name, labels, tail = line[:space], _NO_LABELS, line[space:]
        else:
            close = line.rfind("}")
            if close < brace:
                raise _Unsure
            name, tail = line[:brace], line[close + 1 :]
            block = line[brace + 1 : close]
            labels = self.blocks.get(block) or self._labels(block)
        dcgm = self.names.get(name)
        if dcgm is None:
            dcgm = self._name(name)
        value = self.values.get(tail)
        if value is None:
            value = self._value(tail)
        if name not in self.allowed:
            # The library's own rule: a sample its family does not own stands alone, untyped.
            self._start("")
            self.type, self.allowed = "untyped", frozenset()
        elif dcgm:
            self.members.append(len(self.out))
        if dcgm:
            self.out.append((name, labels, value))

    def _name(self, name: str) -> bool:
        dcgm = self.names.get(name)
        if dcgm is None:
            if _NAME.fullmatch(name) is None:
                raise _Unsure
            dcgm = self.names[name] = name[:8].upper() == _PREFIX
        return dcgm

    def _labels(self, block: str) -> dict[str, str]:
        labels = self.blocks.get(block)
        if labels is None:
            if _BLOCK.fullmatch(block) is None:
                raise _Unsure
            pairs = _PAIRS.findall(block)
            labels = {name: _unescape(value) if "\\" in value else value for name, value in pairs}
            if len(labels) != len(pairs):
                raise _Unsure  # a label twice: the library refuses the line
            self.blocks[block] = labels
        return labels

    def _value(self, tail: str) -> float:
        value = self.values.get(tail)
        if value is None:
            number = _TAIL.fullmatch(tail)
            if number is None:
                raise _Unsure
            value = self.values[tail] = float(number[1])
        return value

    def _start(self, name: str) -> None:
        self._close()
        self.family, self.members = name, []

    def _close(self) -> None:
        # The library names a counter's samples `<name>_total` unless its family name has it.
        if self.type == "counter" and not self.family.endswith("_total"):
            for i in self.members:
                name, labels, value = self.out[i]
                self.out[i] = (name + "_total", labels, value)
        self.members = []


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _UNESCAPED[m.group()], value) if "\\" in value else value
