"""What the demo's providers bill, per UTC day: a little more than its gateway recorded.

The fake OpenAI and Anthropic cost APIs and the fake cloud export all read these figures, so
the demo's drift is one story told three ways:

- OpenAI bills every gpt-4o token LiteLLM recorded, at its list price in USD (LiteLLM prices
  them in EUR at `USD_TO_EUR`), plus the cache reads the gateway did not count (`CACHE_READ`
  of the input) and, on the 3rd of each month, a batch that went round the gateway
  (`UNRECORDED_BATCH`), a day the gateway recorded nothing of it;
- Anthropic bills a small workspace whose traffic never went through the gateway at all;
- the cloud's FOCUS export bills the GPU node at `NODE_MARKUP` over what OpenCost charges.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from chargeback_demo.cluster import Cluster
from chargeback_demo.litellm_rows import rows_between

__all__ = [
    "ANTHROPIC_DAILY_CENTS",
    "ANTHROPIC_WORKSPACE",
    "CACHE_READ",
    "NODE_MARKUP",
    "OPENAI_PROJECT",
    "UNRECORDED_BATCH",
    "USD_TO_EUR",
    "BilledItem",
    "openai_items",
]

USD_TO_EUR = 0.92  # bills.currency_rates.USD in the demo's config
CACHE_READ = 0.04  # of the input's cost: cache reads the gateway missed
UNRECORDED_BATCH = 3.10  # USD, billed on the 3rd, recorded by no gateway
UNRECORDED_DAY = 3
NODE_MARKUP = 1.03  # the cloud bills the node 3 % above OpenCost's rate
OPENAI_PROJECT = "proj_demo_gateway"
ANTHROPIC_WORKSPACE = "wrkspc_demo_labs"
ANTHROPIC_DAILY_CENTS = "83.25"  # 0.8325 USD a day, as the API writes it


@dataclass(frozen=True)
class BilledItem:
    """One line item of one UTC day, in USD."""

    day: date
    line_item: str
    amount: float


def openai_items(cluster: Cluster, first: date, last: date, now: datetime) -> list[BilledItem]:
    """OpenAI's line items of [first, last] up to `now`, by day and line item."""
    sums: dict[tuple[date, str], float] = defaultdict(float)
    for row in rows_between(cluster, first, last, now):
        if row.provider != "openai":
            continue
        day = date.fromisoformat(row.date)
        prompt = row.prompt_tokens * _input_price(cluster, row.model_group)
        sums[(day, f"{row.model}, input")] += prompt / USD_TO_EUR
        sums[(day, f"{row.model}, output")] += (row.spend - prompt) / USD_TO_EUR
        sums[(day, f"{row.model}, cached input")] += CACHE_READ * prompt / USD_TO_EUR
    for day in {day for day, _ in sums}:
        if day.day == UNRECORDED_DAY:
            sums[(day, "gpt-4o-2024-08-06, batch input")] += UNRECORDED_BATCH
    return [BilledItem(day, item, round(value, 6)) for (day, item), value in sorted(sums.items())]


def _input_price(cluster: Cluster, model: str) -> float:
    return next(t.input_cost_per_token for t in cluster.llm_traffic if t.model == model)
