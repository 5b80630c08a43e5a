"""The demo's LiteLLM spend rows, as LiteLLM_DailyTeamSpend holds them, and the dates a read covers.

Usage comes from the cluster model: one DB-like row per team x UTC date x API key x model, with
the day's tokens rounded to whole tokens (LiteLLM stores bigints) and spend priced at the
traffic's declared per-token prices. History starts on the 1st of the previous month.

As in a real proxy, a row's `model` is the provider model of the deployment that served it and
its `model_group` the public name teams call (the cluster's model names).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from chargeback_demo.cluster import Cluster, LlmTraffic

__all__ = ["DAY", "FakeRow", "deployment", "history_start", "live_end", "rows_between"]

DAY = timedelta(days=1)
_NS = uuid.UUID("6f1d7c3e-2b8a-4c55-9d0e-1a2b3c4d5e6f")
# The deployments behind the cluster's public model names, as a proxy's model_list maps them.
_DEPLOYMENTS = {
    "gpt-4o": ("openai", "gpt-4o-2024-08-06"),
    "llama-3-70b": ("hosted_vllm", "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"),
}


def deployment(model_group: str) -> tuple[str, str]:
    """The provider and provider model serving a public model name."""
    return _DEPLOYMENTS.get(model_group, ("hosted_vllm", f"hosted_vllm/{model_group}"))


@dataclass(frozen=True)
class FakeRow:
    """One row of LiteLLM_DailyTeamSpend."""

    id: str
    team_id: str | None
    date: str
    api_key: str
    model: str  # the provider model, e.g. "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
    model_group: str  # the public name, e.g. "llama-3-70b"
    provider: str
    prompt_tokens: int
    completion_tokens: int
    spend: float
    api_requests: int


def history_start(now: datetime) -> datetime:
    """When the fake proxy's spend history begins: the 1st of the month before `now` (UTC)."""
    first = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return (first - DAY).replace(day=1)


def rows_between(cluster: Cluster, first: date, last: date, now: datetime) -> list[FakeRow]:
    """Non-empty daily rows dated in [first, last] up to `now`, ordered date desc, id asc."""
    rows: list[FakeRow] = []
    day = max(first, history_start(now).date())
    while day <= min(last, now.astimezone(UTC).date()):
        start = datetime.combine(day, time(), UTC)
        rows.extend(_day_rows(cluster, day, start, min(start + DAY, now)))
        day += DAY
    rows.sort(key=lambda r: r.id)
    rows.sort(key=lambda r: r.date, reverse=True)
    return rows


def _day_rows(cluster: Cluster, day: date, start: datetime, end: datetime) -> Iterable[FakeRow]:
    sums: dict[LlmTraffic, list[float]] = {}
    for traffic, _, hours in cluster.llm_usage(start, end):
        acc = sums.setdefault(traffic, [0.0, 0.0, 0.0])
        acc[0] += traffic.prompt_per_hour * hours
        acc[1] += traffic.completion_per_hour * hours
        acc[2] += traffic.requests_per_hour * hours
    for traffic, (prompt_f, completion_f, requests_f) in sums.items():
        prompt, completion = round(prompt_f), round(completion_f)
        if prompt == 0 and completion == 0:
            continue
        spend = prompt * traffic.input_cost_per_token + completion * traffic.output_cost_per_token
        name = f"{day.isoformat()}/{traffic.team_id}/{traffic.model}"
        provider, model = deployment(traffic.model)
        yield FakeRow(
            id=str(uuid.uuid5(_NS, name)),
            team_id=traffic.team_id,
            date=day.isoformat(),
            api_key=_key_hash(traffic.team_id),
            model=model,
            model_group=traffic.model,
            provider=provider,
            prompt_tokens=prompt,
            completion_tokens=completion,
            spend=spend,
            api_requests=round(requests_f),
        )


def _key_hash(team_id: str | None) -> str:
    # LiteLLM stores keys as the sha256 hex of the raw key; one app key per team here.
    return hashlib.sha256(f"sk-app-{team_id or 'no-team'}".encode()).hexdigest()


def live_end(end: date, offset_minutes: int, now: datetime) -> date:
    """The last UTC date a range ending on `end` (a date of the caller's zone) reads.

    LiteLLM's dates are UTC dates and `timezone` moves no row: interior dates pass through. It
    only extends a range that reaches the caller's today to today's UTC date, which west of UTC
    already holds part of the caller's today (the rest of that date is the empty future).
    `offset_minutes` is UTC minus local, JavaScript's getTimezoneOffset sign.
    """
    utc = now.astimezone(UTC)
    caller_today = (utc - timedelta(minutes=offset_minutes)).date()
    return end if end < caller_today else max(end, utc.date())
