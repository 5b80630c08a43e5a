"""The direct renderer writes the very bytes prometheus_client writes, in both formats."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector, CollectorRegistry

from exporter import redact
from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.costs import TEAM_COST_PER_HOUR
from exporter.exposition.catalogue.family import Family
from exporter.exposition.render import families
from exporter.exposition.samples import Sample
from exporter.exposition.textformat import render_formats
from tests.support.properties import examples


class _Fixed(Collector):
    def __init__(self, metrics: list[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics


def _library(samples: list[Sample]) -> tuple[bytes, bytes]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families(samples)))
    return generate_latest(registry), generate_openmetrics(registry)  # type: ignore[no-untyped-call]


# Label values that need escaping, non-ASCII text, and values Go formats its own way.
_values = st.text(alphabet=st.sampled_from('ab-_"\\\n\t é€{}=,'), max_size=6)
_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20).map(float),
    st.sampled_from([0.0, -0.0, 1e-7, 123456789.0, 1e22, 0.1 + 0.2]),
)


@st.composite
def _samples(draw: st.DrawFn) -> list[Sample]:
    chosen: list[Family] = draw(st.lists(st.sampled_from(CATALOGUE), unique=True, max_size=8))
    out = []
    for fam in chosen:
        series = draw(
            st.dictionaries(
                st.tuples(*(_values for _ in fam.labels)), _numbers, min_size=1, max_size=5
            )
        )
        for values, number in series.items():
            labels = list(zip(fam.labels, values, strict=True))
            # Callers give labels in any order; the catalogue order is the renderer's to apply.
            out.append(Sample(fam, tuple(reversed(labels)), number))
    return draw(st.permutations(out))


@settings(max_examples=examples(150), deadline=None)
@given(_samples())
def test_both_formats_are_byte_for_byte_the_librarys(samples: list[Sample]) -> None:
    assert render_formats(samples) == _library(samples)


def test_every_catalogue_family_renders_like_the_library() -> None:
    samples = [Sample(f, tuple((n, f"v-{n}") for n in f.labels), 2.5) for f in CATALOGUE]
    text, openmetrics = render_formats(samples)
    assert (text, openmetrics) == _library(samples)
    assert text.count(b"# TYPE ") == len(CATALOGUE)


def test_duplicate_series_and_wrong_labels_are_refused() -> None:
    one = Sample.of(TEAM_COST_PER_HOUR, 1.0, team="a", component="gpu")
    with pytest.raises(ValueError, match="duplicate series"):
        render_formats([one, Sample.of(TEAM_COST_PER_HOUR, 2.0, component="gpu", team="a")])
    with pytest.raises(ValueError, match="labels"):
        render_formats([Sample.of(TEAM_COST_PER_HOUR, 1.0, team="a")])


def test_a_label_value_quoting_a_secret_is_masked_where_it_leaves() -> None:
    # An upstream that echoes a key as a name: the join reads the name, the scrape never sees it.
    secret = "sk-echoed-by-an-upstream-0042"
    redact.register("test label secret", secret)
    try:
        sample = Sample.of(TEAM_COST_PER_HOUR, 1.0, team=f"team-{secret}", component="gpu")
        text, openmetrics = render_formats([sample])
    finally:
        redact.forget("test label secret")
    for body in (text, openmetrics):
        assert secret.encode() not in body
        assert b'team="team-<redacted>"' in body
