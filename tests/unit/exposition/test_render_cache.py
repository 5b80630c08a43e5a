"""The render cache: reused family lines give the very bytes an uncached render gives."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.costs import TEAM_COST_PER_HOUR
from exporter.exposition.catalogue.family import Family, Kind
from exporter.exposition.catalogue.llm import LLM_SPEND_MONTH_TO_DATE
from exporter.exposition.render import Exposition, render
from exporter.exposition.samples import Sample
from exporter.exposition.textformat import RenderCache, render_formats
from tests.support.properties import examples

_values = st.text(alphabet=st.sampled_from('ab-_"\\\n é'), max_size=4)
_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e22, 0.1 + 0.2]),
)
INFO = {f.name for f in CATALOGUE if f.kind is Kind.INFO}
_ACTIONS = ("same", "copy", "value", "zero", "reorder", "drop", "grow")


@st.composite
def _family(draw: st.DrawFn, fam: Family) -> list[Sample]:
    series = draw(
        st.dictionaries(st.tuples(*(_values for _ in fam.labels)), _numbers, min_size=1, max_size=4)
    )
    return [Sample(fam, tuple(zip(fam.labels, v, strict=True)), n) for v, n in series.items()]


def _copy(s: Sample) -> Sample:
    """An equal sample that shares no label object with `s`."""
    return Sample(s.family, tuple((k, "".join(list(v))) for k, v in s.labels), s.value)


@dataclass(frozen=True)
class _Step:
    families: dict[str, list[Sample]]
    kept: frozenset[str]  # families whose samples are the very objects of the step before
    revalued: frozenset[str]  # families with the same series as before, a value changed


@st.composite
def _steps(draw: st.DrawFn) -> list[_Step]:
    chosen = draw(st.lists(st.sampled_from(CATALOGUE), min_size=1, max_size=6, unique=True))
    current = {fam.name: draw(_family(fam)) for fam in chosen}
    steps = [_Step(dict(current), frozenset(), frozenset())]
    for _ in range(draw(st.integers(1, 5))):
        kept, revalued = set(), set()
        for fam in chosen:
            group = current.get(fam.name)
            action = draw(st.sampled_from(_ACTIONS))
            if group is None or action == "grow":
                current[fam.name] = draw(_family(fam))
                continue
            i = draw(st.integers(0, len(group) - 1))
            if action == "same":
                kept.add(fam.name)
            elif action == "copy":
                current[fam.name] = [_copy(s) for s in group]
            elif action in ("value", "zero"):
                old = group[i].value
                # "zero": 0.0 <-> -0.0, which compare equal and render apart.
                new = (-old if old == 0 else 0.0) if action == "zero" else draw(_numbers)
                current[fam.name] = [*group[:i], Sample(fam, group[i].labels, new), *group[i + 1 :]]
                revalued.add(fam.name)
            elif action == "reorder":
                current[fam.name] = draw(st.permutations(group))
            else:
                del current[fam.name]
        steps.append(_Step(dict(current), frozenset(kept), frozenset(revalued)))
    return steps


def _flat(families: dict[str, list[Sample]]) -> list[Sample]:
    return [s for group in families.values() for s in group]


@settings(max_examples=examples(200), deadline=None)
@given(_steps())
def test_cached_renders_are_byte_for_byte_uncached_ones(steps: list[_Step]) -> None:
    memo = RenderCache()
    for step in steps:
        samples = _flat(step.families)
        cached = render(samples, memo)
        # Plain and gzipped, in both formats.
        assert cached == render(samples)
        assert (cached.text, cached.openmetrics) == render_formats(samples)
        # Not vacuous: a family handed over unchanged came from the cache, and one with the
        # same series kept its layout (an info family has none).
        assert step.kept <= set(memo.reused)
        revalued = step.revalued - INFO
        assert revalued <= set(memo.reused) | set(memo.relaid)


def test_a_changed_family_is_rendered_again_and_the_others_are_reused() -> None:
    cost = [Sample.of(TEAM_COST_PER_HOUR, 1.5, team=t, component="gpu") for t in ("a", "b")]
    spend = [Sample.of(LLM_SPEND_MONTH_TO_DATE, 2.0, team="a", model="m")]
    memo = RenderCache()
    render_formats([*cost, *spend], memo)
    changed = [cost[0], Sample.of(TEAM_COST_PER_HOUR, 7.25, team="b", component="gpu")]
    text, openmetrics = render_formats([*changed, *spend], memo)
    assert (text, openmetrics) == render_formats([*changed, *spend])
    assert b'chargeback_team_cost_per_hour{component="gpu",team="b"} 7.25\n' in text
    assert memo.reused == (LLM_SPEND_MONTH_TO_DATE.name,)
    assert memo.relaid == (TEAM_COST_PER_HOUR.name,)


def test_a_new_series_is_laid_out_again_in_order() -> None:
    b = Sample.of(TEAM_COST_PER_HOUR, 1.0, team="b", component="gpu")
    memo = RenderCache()
    render_formats([b], memo)
    a = Sample.of(TEAM_COST_PER_HOUR, 2.0, team="a", component="gpu")
    text, _ = render_formats([b, a], memo)
    assert text.endswith(
        b'team="a"} 2.0\nchargeback_team_cost_per_hour{component="gpu",team="b"} 1.0\n'
    )
    assert memo.relaid == memo.reused == ()


def test_a_zero_that_changes_sign_is_rendered_again() -> None:
    memo = RenderCache()
    render_formats([Sample.of(TEAM_COST_PER_HOUR, 0.0, team="a", component="gpu")], memo)
    text, _ = render_formats([Sample.of(TEAM_COST_PER_HOUR, -0.0, team="a", component="gpu")], memo)
    assert text.endswith(b'{component="gpu",team="a"} -0.0\n')
    assert memo.reused == ()


def test_a_failed_render_leaves_the_cache_as_it_was() -> None:
    one = Sample.of(TEAM_COST_PER_HOUR, 1.0, team="a", component="gpu")
    spend = Sample.of(LLM_SPEND_MONTH_TO_DATE, 2.0, team="a", model="m")
    memo = RenderCache()
    first = render_formats([one, spend], memo)
    with pytest.raises(ValueError, match="duplicate series"):
        render_formats([one, one, spend], memo)
    assert render_formats([one, spend], memo) == first
    assert set(memo.reused) == {TEAM_COST_PER_HOUR.name, LLM_SPEND_MONTH_TO_DATE.name}


def _one_member(gzipped: bytes) -> bytes:
    """The content of a gzip body that is exactly one member, nothing after it."""
    assert gzipped[:3] == b"\x1f\x8b\x08"
    reader = zlib.decompressobj(wbits=31)
    content = reader.decompress(gzipped) + reader.flush()
    assert reader.eof and reader.unused_data == b""
    return content


def _check_gzip(exposition: Exposition) -> None:
    assert _one_member(exposition.text_gzip) == exposition.text
    assert _one_member(exposition.openmetrics_gzip) == exposition.openmetrics
    assert gzip.decompress(exposition.text_gzip) == exposition.text


def test_gzip_bodies_are_one_member_of_the_plain_bytes() -> None:
    cost = [
        Sample.of(TEAM_COST_PER_HOUR, float(i), team=f"t{i}", component="gpu") for i in range(500)
    ]
    spend = [Sample.of(LLM_SPEND_MONTH_TO_DATE, 2.0, team="a", model="m")]
    memo = RenderCache()
    _check_gzip(render([], memo))
    _check_gzip(render([*cost, *spend], memo))
    changed = render([*cost[:-1], *spend], memo)
    assert memo.reused == (LLM_SPEND_MONTH_TO_DATE.name,)
    _check_gzip(changed)
    assert len(changed.text_gzip) < len(changed.text) / 3
