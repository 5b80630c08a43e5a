"""The Kueue source's lists: one bad resource fails the read, and lists that do not add up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from exporter.config.schema import KueueConfig
from exporter.errors import RecordsDropped, UpstreamIncomplete, UpstreamTooLarge
from tests.unit.sources.kueue.api_server import GPU, client_for, cq, fetch


def _gpu_cq(name: str, nominal: Any, cpu: Any = "8") -> dict[str, Any]:
    resources = [{"name": GPU, "nominalQuota": nominal}, {"name": "cpu", "nominalQuota": cpu}]
    return cq(
        name,
        "v1beta2",
        "",
        [{"coveredResources": [GPU, "cpu"], "flavors": [{"name": "h100", "resources": resources}]}],
    )


def _pages(
    pages: list[tuple[list[Any], dict[str, Any]]],
) -> Callable[[httpx.Request], httpx.Response]:
    """A server answering page i (by continue token "i") with the given items and metadata."""

    def answer(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params.get("continue", "0") or 0)
        items, meta = pages[index]
        return httpx.Response(
            200, json={"kind": "ClusterQueueList", "metadata": meta, "items": items}
        )

    return answer


@pytest.mark.parametrize(
    ("nominal", "reason"),
    [
        (1e308, "out_of_range"),
        ("1e400", "non_finite"),
        (-2, "out_of_range"),
        (None, "missing_field"),
        (True, "wrong_type"),
    ],
)
def test_one_bad_quota_resource_is_dropped_counted_and_fails_the_read(
    token_file: str, nominal: Any, reason: str
) -> None:
    # Quota feeds the money teams borrow and lend: a read without one row would be wrong.
    cfg = KueueConfig(url="https://k", token_file=token_file)
    items = [_gpu_cq("bad", nominal), _gpu_cq("good", 4)]
    with client_for(_pages([(items, {})]), cfg) as client, pytest.raises(RecordsDropped) as err:
        fetch(client, cfg)
    assert err.value.dropped == {reason: 1} and err.value.reason == "malformed"
    assert "'bad'" in str(err.value)


def test_an_empty_list_after_queues_waits_for_a_second_read(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    pages: list[list[tuple[list[Any], dict[str, Any]]]] = [[([_gpu_cq("a", 2)], {})]]

    def answer(request: httpx.Request) -> httpx.Response:
        return _pages(pages[0])(request)

    with client_for(answer, cfg) as client:
        assert [r.cluster_queue for r in fetch(client, cfg).queues] == ["a", "a"]
        pages[0] = [([], {})]
        with pytest.raises(UpstreamIncomplete, match=r"the ClusterQueue list.* came back empty"):
            fetch(client, cfg)
        # Said twice, it is the truth: the queues were deleted.
        assert fetch(client, cfg).queues == ()


def test_the_same_queue_on_two_pages_counts_once(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    a, b = _gpu_cq("a", 2), _gpu_cq("b", 3)
    server = _pages([([a, b], {"continue": "1", "remainingItemCount": 1}), ([b], {})])
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert [r.nominal for r in snapshot.queues if r.resource == GPU] == [2.0, 3.0]
    assert snapshot.dropped == {"duplicate": 1}


@pytest.mark.parametrize(
    ("pages", "needle"),
    [
        # Two versions of one queue: which one holds cannot be known.
        (
            [([_gpu_cq("a", 2)], {"continue": "1"}), ([_gpu_cq("a", 5)], {})],
            "different values",
        ),
        # remainingItemCount promised three more; the list ended after one.
        (
            [
                ([_gpu_cq("a", 2)], {"continue": "1", "remainingItemCount": 3}),
                ([_gpu_cq("b", 1)], {}),
            ],
            "announced 4",
        ),
        # The last page still says items remain.
        ([([_gpu_cq("a", 2)], {"remainingItemCount": 2})], "announced 3"),
    ],
)
def test_lists_that_do_not_add_up_fail_the_refresh(
    token_file: str, pages: list[tuple[list[Any], dict[str, Any]]], needle: str
) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    with (
        client_for(_pages(pages), cfg) as client,
        pytest.raises(UpstreamIncomplete, match=needle) as caught,
    ):
        fetch(client, cfg)
    assert caught.value.reason == "incomplete"


def test_a_list_that_never_ends_is_cut_off(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    seen: list[int] = []

    def endless(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params.get("continue", "0") or 0)
        seen.append(index)
        # One queue a page, always "one more to come", a fresh token each time.
        meta = {"continue": str(index + 1), "remainingItemCount": 1}
        return httpx.Response(200, json={"items": [_gpu_cq(f"q{index}", 1)], "metadata": meta})

    with client_for(endless, cfg) as client, pytest.raises(UpstreamIncomplete, match="pages"):
        fetch(client, cfg)
    assert len(seen) == 3  # one page, one announced, one for slack


def test_a_list_announcing_more_pages_than_a_refresh_reads_is_refused_at_once(
    token_file: str,
) -> None:
    asked: list[str] = []
    server = _pages([([_gpu_cq("a", 2)], {"continue": "1", "remainingItemCount": 10**9})])

    def counting(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return server(request)

    cfg = KueueConfig(url="https://k", token_file=token_file)
    with (
        client_for(counting, cfg) as client,
        pytest.raises(UpstreamTooLarge, match="pages a refresh reads") as caught,
    ):
        fetch(client, cfg)
    assert len(asked) == 1 and caught.value.reason == "too_large"
