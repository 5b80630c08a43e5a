"""Samples: which upstreams each figure is built from, its family's and its component's."""

from __future__ import annotations

from exporter.exposition.catalogue.costs import TEAM_COST_MONTH_TO_DATE
from exporter.exposition.catalogue.dimensions import DIMENSION_COST_MONTH_TO_DATE
from exporter.exposition.catalogue.family import Family
from exporter.exposition.catalogue.llm import LLM_BUDGET_SPEND, LLM_COST_PER_TOKEN
from exporter.exposition.samples import Sample, sources_of


def test_every_figure_names_the_sources_it_is_built_from() -> None:
    def of(family: Family, **labels: str) -> frozenset[str]:
        return sources_of(Sample(family, tuple(labels.items()), 1.0))

    assert of(TEAM_COST_MONTH_TO_DATE, team="t", component="gpu") == {"opencost"}
    assert of(TEAM_COST_MONTH_TO_DATE, team="t", component="llm_external") == {
        "opencost",
        "litellm",
    }
    assert of(DIMENSION_COST_MONTH_TO_DATE, dimension="d", value="v", component="lent") == {
        "opencost",
        "kueue",
    }
    assert of(LLM_COST_PER_TOKEN, model="m", basis="declared") == {"litellm", "opencost", "vllm"}
    assert of(LLM_BUDGET_SPEND, team="t") == {"litellm"}


def test_a_family_without_a_component_label_takes_no_component_rule() -> None:
    # A label named like a component elsewhere changes nothing where there is none.
    sample = Sample(LLM_BUDGET_SPEND, (("team", "llm_serving"),), 1.0)
    assert sources_of(sample) == {"litellm"}
