"""The bodies of LiteLLM's daily-activity endpoints: each date's metrics and their breakdowns."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chargeback_demo.litellm_rows import FakeRow

__all__ = ["activity", "tag_activity"]


def activity(
    rows: list[FakeRow], paging: Mapping[str, Any], aliases: Mapping[str, str | None]
) -> dict[str, Any]:
    """A team daily-activity body: each date's metrics broken down by team, model, key, ..."""
    by_date: dict[str, list[FakeRow]] = {}
    for row in rows:
        by_date.setdefault(row.date, []).append(row)
    results = [
        {"date": d, "metrics": _metrics(rs), "breakdown": _breakdown(rs, aliases)}
        for d, rs in sorted(by_date.items(), reverse=True)
    ]
    total = _metrics(rows)
    metadata = {f"total_{k}": v for k, v in total.items() if k != "total_tokens"}
    metadata["total_tokens"] = total["total_tokens"]
    metadata.update(paging)
    metadata.update({"api_key_limit": None, "total_api_keys": None})
    return {"results": results, "metadata": metadata}


def tag_activity(chunk: list[tuple[str, FakeRow]], paging: Mapping[str, Any]) -> dict[str, Any]:
    """A tag daily-activity body: each date's rows under each request tag they carry."""
    by_date: dict[str, dict[str, list[FakeRow]]] = {}
    for tag, row in chunk:
        by_date.setdefault(row.date, {}).setdefault(tag, []).append(row)
    results = [
        {
            "date": d,
            "metrics": _metrics(r for rs in by_tag.values() for r in rs),
            "breakdown": {
                "entities": {
                    tag: {
                        "metrics": _metrics(rs),
                        "metadata": {},
                        "api_key_breakdown": _key_breakdown(rs),
                    }
                    for tag, rs in sorted(by_tag.items())
                }
            },
        }
        for d, by_tag in sorted(by_date.items(), reverse=True)
    ]
    metadata = {"total_spend": sum(r.spend for _, r in chunk), **paging}
    return {"results": results, "metadata": metadata}


def _key_breakdown(rows: list[FakeRow]) -> dict[str, Any]:
    """Per API key (in the order keys first appear), its rows' metrics and its team."""
    by_key: dict[str, list[FakeRow]] = {}
    for row in rows:
        by_key.setdefault(row.api_key, []).append(row)
    return {
        key: {
            "metrics": _metrics(rs),
            # The last row's team, as the per-row comprehension this replaces kept.
            "metadata": {"key_alias": None, "team_id": rs[-1].team_id},
        }
        for key, rs in by_key.items()
    }


def _breakdown(rows: list[FakeRow], aliases: Mapping[str, str | None]) -> dict[str, Any]:
    def group(key: Callable[[FakeRow], str], meta: Callable[[str], dict[str, Any]]) -> Any:
        groups: dict[str, list[FakeRow]] = {}
        for row in rows:
            groups.setdefault(key(row), []).append(row)
        return {
            name: {
                "metrics": _metrics(rs),
                "metadata": meta(name),
                "api_key_breakdown": _key_breakdown(rs),
            }
            for name, rs in groups.items()
        }

    def entity_meta(name: str) -> dict[str, Any]:
        return {} if name == "Unassigned" else {"team_alias": aliases.get(name)}

    return {
        "entities": group(lambda r: r.team_id or "Unassigned", entity_meta),
        "models": group(lambda r: r.model, lambda _: {}),
        "model_groups": group(lambda r: r.model_group, lambda _: {}),
        "providers": group(lambda r: r.provider, lambda _: {}),
        "api_keys": {r.api_key: {"metrics": _metrics([r]), "metadata": {}} for r in rows},
        "endpoints": {},
        "mcp_servers": {},
    }


def _metrics(rows: Iterable[FakeRow]) -> dict[str, Any]:
    rows = list(rows)
    prompt = sum(r.prompt_tokens for r in rows)
    completion = sum(r.completion_tokens for r in rows)
    requests = sum(r.api_requests for r in rows)
    return {
        "spend": sum(r.spend for r in rows),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "api_requests": requests,
        "successful_requests": requests,
        "failed_requests": 0,
    }
