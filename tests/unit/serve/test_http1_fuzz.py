"""Hostile request heads through the parsing layer: a request or a refusal, never a crash.

Each head is fed in arbitrary pieces, as a socket might deliver it, then the end of stream;
what comes out is a Request that routes answer without error, or a BadRequest whose status
is one a client can act on. Nothing else may escape, and nothing accepted exceeds the bounds.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.exposition.catalogue.health import SOURCE_UP
from exporter.exposition.render import render
from exporter.exposition.samples import Sample
from exporter.serve.http1 import MAX_HEAD_BYTES, BadRequest, Request, RequestReader
from exporter.serve.routes import Routes
from tests.support.hostile_heads import HOSTILE, hostile_heads, well_formed_heads
from tests.support.properties import examples

FUZZ = settings(
    max_examples=examples(500),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REFUSALS = {400, 413, 431, 501, 505}
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
ROUTES = Routes("/metrics", lambda: render([Sample.of(SOURCE_UP, 1.0, source="opencost")]))


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def _read(data: bytes, cuts: list[int]) -> Request | BadRequest | None:
    """Feed `data` cut at `cuts`, then the end of stream: what the server would act on."""
    reader = RequestReader()
    try:
        for piece in _pieces(data, cuts):
            request = reader.feed(piece)
            if request is not None:
                return request
        return reader.feed(b"")
    except BadRequest as refused:
        return refused


def _judge(outcome: Request | BadRequest | None) -> None:
    assert outcome is not None  # the end of stream always settles it
    if isinstance(outcome, BadRequest):
        assert outcome.status in REFUSALS, outcome
        return
    assert _TOKEN.match(outcome.method)
    assert len(outcome.headers) <= 100
    for name, value in outcome.headers.items():
        assert _TOKEN.match(name) and name == name.lower()
        assert not set(value) & {"\x00", "\r", "\n"}
    assert sum(len(k) + len(v) for k, v in outcome.headers.items()) <= MAX_HEAD_BYTES
    response = ROUTES.answer(outcome)
    assert 200 <= response.status < 600


CUTS = st.lists(st.integers(0, 70_000), max_size=6)


@FUZZ
@given(head=hostile_heads(), cuts=CUTS)
def test_a_hostile_head_is_read_or_refused(head: bytes, cuts: list[int]) -> None:
    _judge(_read(head, cuts))


@FUZZ
@given(head=well_formed_heads(), cuts=CUTS)
def test_a_well_formed_head_reads_the_same_in_any_pieces(head: bytes, cuts: list[int]) -> None:
    whole, cut = _read(head, []), _read(head, cuts)
    assert isinstance(whole, Request), whole
    assert cut == whole
    _judge(cut)


def test_every_catalogued_head_is_read_or_refused() -> None:
    outcomes = [_read(head, []) for head in HOSTILE]
    for outcome in outcomes:
        _judge(outcome)
    refused = sum(isinstance(o, BadRequest) for o in outcomes)
    # Only the two folded heads (unfolded), the bare-LF head and the pipelined scrape are taken.
    assert refused == len(HOSTILE) - 4, [o for o in outcomes if not isinstance(o, BadRequest)]
