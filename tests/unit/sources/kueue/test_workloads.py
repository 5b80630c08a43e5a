"""Workload objects: Kueue's documented preempted Workload, and shapes unlike it."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from exporter.sources.checks import BadRecord, Tally
from exporter.sources.kueue.workloads import UNKNOWN_REASON, parse_workload, parse_workloads

FIXTURE = Path(__file__).parents[3] / "fixtures" / "kueue" / "workload_preempted.json"


def documented() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return loaded


def test_kueues_documented_preempted_workload() -> None:
    w = parse_workload(documented())
    assert (w.namespace, w.name, w.local_queue, w.cluster_queue) == (
        "team-a",
        "sample-job",
        "team-a-queue",
        "",  # quota released on eviction: status.admission is gone
    )
    assert w.gpus == 3  # 3 pods, each 1 GPU (a limit stands for the request)
    assert w.evicted_now and w.evicted_at == datetime(2025, 3, 7, 21, 19, 54, tzinfo=UTC)
    assert (w.ran_seconds, dict(w.evictions)) == (10800, {"Preempted": 1})
    assert w.labels["team"] == "team-a" and w.key == "team-a/sample-job"


def test_an_admitted_workload_names_its_queue_and_gpu_flavor() -> None:
    item = documented()
    item["status"] = {
        "admission": {
            "clusterQueue": "team-a-cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "count": 3,
                    "flavors": {"cpu": "default-flavor", "nvidia.com/gpu": "h100"},
                    "resourceUsage": {"cpu": "3", "nvidia.com/gpu": "3"},
                }
            ],
        },
        "conditions": [
            {"type": "Admitted", "status": "True", "reason": "Admitted",
             "lastTransitionTime": "2025-03-07T19:00:00+00:00"},
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
             "lastTransitionTime": "2025-03-07T18:59:00Z"},
        ],
    }  # fmt: skip
    w = parse_workload(item)
    assert (w.cluster_queue, w.gpu_flavor) == ("team-a-cq", "h100")
    assert w.quota_reserved_at == datetime(2025, 3, 7, 18, 59, tzinfo=UTC)
    assert not w.evicted_now and w.evictions == {} and w.ran_seconds == 0


def test_readmitted_after_eviction_keeps_its_reasons_in_the_stats_only() -> None:
    item = documented()
    evicted = item["status"]["conditions"][0]
    evicted.update(status="False", reason="QuotaReserved")
    item["status"]["schedulingStats"]["evictions"] = [
        {"reason": "Preempted", "underlyingCause": "", "count": 2},
        {"reason": "PodsReadyTimeout", "underlyingCause": "", "count": 1},
        {"reason": "Preempted", "underlyingCause": "AdmissionCheck", "count": 1},
    ]
    w = parse_workload(item)
    assert not w.evicted_now
    assert w.evictions == {"PodsReadyTimeout": 1, "Preempted": 3}


def test_without_stats_an_old_kueue_says_only_a_current_evictions_reason() -> None:
    item = documented()
    del item["status"]["schedulingStats"]
    assert parse_workload(item).evictions == {"Preempted": 1}
    item["status"]["conditions"][0].update(status="False", reason="QuotaReserved")
    assert parse_workload(item).evictions == {UNKNOWN_REASON: 1}


def test_init_containers_run_one_at_a_time_and_pod_sets_add_up() -> None:
    item = documented()
    pod = item["spec"]["podSets"][0]["template"]["spec"]
    pod["initContainers"] = [{"name": "warm", "resources": {"requests": {"nvidia.com/gpu": 2}}}]
    pod["containers"].append({"name": "side", "resources": {"limits": {"nvidia.com/gpu": "2"}}})
    item["spec"]["podSets"].append(
        {"name": "driver", "template": {"spec": {"containers": [{"name": "d"}]}}}
    )
    assert parse_workload(item).gpus == 3 * 3  # max(1 + 2, 2) per pod, x3; the driver none


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("metadata", "creationTimestamp"), "yesterday"),
        (("metadata", "creationTimestamp"), "2025-03-07T18:05:00"),  # no zone
        (("status", "accumulatedPastExecutionTimeSeconds"), -5),
        (("status", "accumulatedPastExecutionTimeSeconds"), "10800"),
        (("spec", "podSets"), {"count": 3}),
        (("metadata", "name"), ""),
    ],
)
def test_a_bad_workload_is_dropped_and_counted_the_rest_kept(
    path: tuple[str, str], value: object
) -> None:
    bad = copy.deepcopy(documented())
    bad[path[0]][path[1]] = value
    with pytest.raises(BadRecord):
        parse_workload(bad)
    good = documented()
    good["metadata"]["name"] = "another"
    tally = Tally()
    kept = parse_workloads([bad, documented(), good], tally)
    assert [w.name for w in kept] == ["another", "sample-job"]
    assert sum(tally.values()) == 1


def test_a_gpu_count_no_cluster_has_is_refused() -> None:
    item = documented()
    item["spec"]["podSets"][0]["count"] = 10**7
    with pytest.raises(BadRecord, match="GPUs"):
        parse_workload(item)


def test_a_condition_status_outside_the_api_is_refused() -> None:
    item = documented()
    item["status"]["conditions"][0]["status"] = "true"
    with pytest.raises(BadRecord, match="status"):
        parse_workload(item)
