"""The LiteLLM part of the join is computed once per LiteLLM snapshot, and never served stale."""

from __future__ import annotations

from dataclasses import replace

from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.config.schema import Config
from exporter.exposition.catalogue.llm import LLM_SPEND_MONTH_TO_DATE
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import Attributor
from exporter.ledger.llm.memo import LlmMemo
from exporter.serve.wiring import Joiner
from exporter.sources.registry import SOURCES
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW, read_all


def _config(stack: DemoStack) -> Config:
    return Config.model_validate(demo_config_dict(stack.urls, str(stack.secrets)))


def _snapshots(records: Snapshots) -> dict[str, object]:
    return {n: s for n in SOURCES if (s := getattr(records, n)) is not None}


def _cold(config: Config, records: Snapshots) -> tuple[Sample, ...]:
    # A fresh joiner: no memo of an earlier join (its forecast too starts from this join).
    return tuple(Joiner(config)(_snapshots(records), FIXED_NOW))


def test_joins_that_reuse_the_litellm_part_equal_cold_joins(stack: DemoStack) -> None:
    config = _config(stack)
    records = read_all(config)
    assert records.litellm is not None and records.opencost is not None
    joiner = Joiner(config)
    # The same LiteLLM snapshot while the other sources change (here: go stale in turn).
    for other in (records, replace(records, kueue=None), replace(records, opencost=None), records):
        assert tuple(joiner(_snapshots(other), FIXED_NOW)) == _cold(config, other)


def test_a_new_litellm_snapshot_is_joined_afresh(stack: DemoStack) -> None:
    config = _config(stack)
    records = read_all(config)
    llm = records.litellm
    assert llm is not None
    joiner = Joiner(config)
    before = tuple(joiner(_snapshots(records), FIXED_NOW))
    first = llm.usage[0]
    spent = replace(
        first, spend=(first.spend or 0.0) + 100.0, prompt_tokens=first.prompt_tokens + 7
    )
    changed = replace(records, litellm=replace(llm, usage=(spent, *llm.usage[1:])))
    after = tuple(joiner(_snapshots(changed), FIXED_NOW))
    assert after == _cold(config, changed)
    assert after != before
    spend = {s.labels: s.value for s in after if s.family is LLM_SPEND_MONTH_TO_DATE}
    assert spend != {s.labels: s.value for s in before if s.family is LLM_SPEND_MONTH_TO_DATE}


def test_the_memo_keys_on_the_snapshot_object_not_its_conversion(stack: DemoStack) -> None:
    config = _config(stack)
    llm = read_all(config).litellm
    assert llm is not None
    attributor, memo, models = Attributor(config), LlmMemo(), config.llm_models
    part = memo.part(llm, attributor, models)
    assert memo.part(llm, attributor, models) is part
    # An equal snapshot is another refresh: computed again (and equal), never assumed equal.
    equal = replace(llm)  # another object, every field equal (tag spend included)
    again = memo.part(equal, attributor, models)
    assert again is not part and again == part
    assert memo.part(equal, Attributor(config), models) is not again
