"""Series areas: each reads only the parts it declares, and a memo rebuilds only what changed."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config, IdlePolicy
from exporter.exposition.catalogue.gpus import GPUS
from exporter.exposition.catalogue.llm import LLM_SPEND_MONTH_TO_DATE
from exporter.exposition.render import RenderCache, render
from exporter.exposition.samples import Sample
from exporter.exposition.series import AREAS, Area, SeriesMemo, series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.reading import Reading
from exporter.sources.registry import SOURCES
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW
from tests.support.bounded_snapshots import bounded_snapshots as records
from tests.support.bounded_snapshots import demo_config as _config
from tests.support.properties import examples

# A property of the result a family may read, and the field it comes from.
_PROPERTIES = {"period": "reading", "at": "reading"}


def _join(config: Config, bundle: Snapshots) -> Chargeback:
    reading = Reading.open(FIXED_NOW, config.zone)
    return join(config, Attributor(config), bundle, reading)


def _with_parts(target: Chargeback, source: Chargeback, reads: tuple[str, ...]) -> Chargeback:
    """`target` with every part `reads` names taken from `source`."""
    top: dict[str, object] = {}
    for path in reads:
        head, _, rest = path.partition(".")
        head = _PROPERTIES.get(head, head)
        parent = top.get(head, getattr(target, head))
        wanted = getattr(source, head)
        if not rest or parent is None or wanted is None:
            top[head] = wanted  # the whole part, when either side has none of it
        else:
            top[head] = replace(parent, **{rest: getattr(wanted, rest)})  # type: ignore[type-var]
    return replace(target, **top)  # type: ignore[arg-type]


def test_every_declared_part_is_a_part_of_the_result() -> None:
    names = {f.name for f in fields(Chargeback)} | set(_PROPERTIES)
    for area in AREAS:
        assert area.reads is not None, area.name
        for path in area.reads:
            assert path.partition(".")[0] in names, (area.name, path)
    assert len({area.name for area in AREAS}) == len(AREAS)


_settings = settings(
    max_examples=examples(25),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("policy", [IdlePolicy.SEPARATE, IdlePolicy.PROPORTIONAL])
@_settings
@given(data=st.data())
def test_each_area_reads_only_the_parts_it_declares(
    policy: IdlePolicy, data: st.DataObject
) -> None:
    config = _config(policy, False)
    first = _join(config, data.draw(records(with_llm=True)))
    other = _join(config, data.draw(records(with_llm=data.draw(st.booleans()))))
    for area in AREAS:
        assert area.reads is not None
        # Everything else from another join: the area's samples must not notice.
        mixed = _with_parts(other, first, area.reads)
        assert area.build(mixed) == area.build(first), area.name


@_settings
@given(data=st.data())
def test_a_memo_builds_what_a_cold_build_does_whatever_changed(data: st.DataObject) -> None:
    config = _config(IdlePolicy.SEPARATE, False)
    one = data.draw(records(with_llm=True))
    two = data.draw(records(with_llm=True))
    # One source at a time moves to the second read, then one goes stale, then all come back.
    steps = [one]
    for name in SOURCES:
        steps.append(replace(steps[-1], **{name: getattr(two, name)}))
    steps += [replace(two, litellm=None), replace(two, dcgm=None), one]
    memo = SeriesMemo()
    for bundle in steps:
        chargeback = _join(config, bundle)
        assert series(chargeback, memo) == series(chargeback)


@_settings
@given(bundle=records(with_llm=True))
def test_an_area_is_built_again_only_when_a_part_it_reads_changed(bundle: Snapshots) -> None:
    config = _config(IdlePolicy.SEPARATE, False)
    assert bundle.dcgm is not None
    memo = SeriesMemo()
    first = memo.build(AREAS, _join(config, bundle))
    assert memo.rebuilt == tuple(a.name for a in AREAS)
    # A DCGM refresh: the same GPUs, one of them now busy in another namespace.
    gpu = bundle.dcgm.gpus[0]
    moved = replace(gpu, namespace="ns-vision" if gpu.namespace != "ns-vision" else "ns-search")
    refreshed = replace(bundle, dcgm=replace(bundle.dcgm, gpus=(moved, *bundle.dcgm.gpus[1:])))
    second = memo.build(AREAS, _join(config, refreshed))
    assert "gpus" in memo.rebuilt
    assert not {"llm", "unit_models", "quota", "calendar"} & set(memo.rebuilt)
    for area, before, after in zip(AREAS, first, second, strict=True):
        if area.name not in memo.rebuilt:
            assert after is before, area.name  # the very list: the renderer's pointer walk
    # Nothing changed at all: nothing is built.
    memo.build(AREAS, _join(config, refreshed))
    assert memo.rebuilt == ()


@_settings
@given(bundle=records(with_llm=True))
def test_the_renderer_keeps_the_families_of_areas_not_rebuilt(bundle: Snapshots) -> None:
    config = _config(IdlePolicy.SEPARATE, False)
    assert bundle.dcgm is not None
    memo, cache = SeriesMemo(), RenderCache()
    render(series(_join(config, bundle), memo), cache)
    refreshed = replace(bundle, dcgm=replace(bundle.dcgm, gpus=bundle.dcgm.gpus[1:]))
    samples = series(_join(config, refreshed), memo)
    exposition = render(samples, cache)
    assert exposition == render(series(_join(config, refreshed)))
    assert LLM_SPEND_MONTH_TO_DATE.name in cache.reused
    assert GPUS.name not in cache.reused


def _counted(calls: list[str], name: str) -> Area:
    def build(chargeback: Chargeback) -> list[Sample]:
        calls.append(name)
        return []

    return Area(name, build, None if name == "everything" else ("gpus",))


@settings(max_examples=1, deadline=None, derandomize=True)
@given(bundle=records(with_llm=False))
def test_an_area_that_declares_nothing_is_built_every_time(bundle: Snapshots) -> None:
    config = _config(IdlePolicy.SEPARATE, False)
    chargeback = _join(config, bundle)
    calls: list[str] = []
    areas = (_counted(calls, "everything"), _counted(calls, "gpus"))
    memo = SeriesMemo()
    for _ in range(3):
        memo.build(areas, chargeback)
    assert calls == ["everything", "gpus", "everything", "everything"]
