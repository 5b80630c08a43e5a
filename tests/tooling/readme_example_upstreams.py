"""docs/chargeback.md's second worked example as upstream payloads: OpenCost, Kueue and LiteLLM.

Shapes follow the upstream APIs, not chargeback_demo's fakes: OpenCost's newer envelope with
fields the exporter does not read, node assets among a disk asset, ClusterQueues that also cover
CPU and memory with Kubernetes quantity strings, and LiteLLM daily activity newest first with
API-key breakdowns under teams, deployments (`models`) and public names (`model_groups`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

__all__ = [
    "GPT4O",
    "GPT4O_DEPLOYMENT",
    "GPU",
    "LLAMA",
    "LLAMA_DEPLOYMENT",
    "NOW",
    "TEAM_IDS",
    "kueue_api",
    "litellm_api",
    "opencost_api",
]

NOW = datetime(2026, 11, 11, tzinfo=UTC)  # the 1st to the 11th at midnight: 240 hours
GPU = "nvidia.com/gpu"
H100_PRODUCT, L40S_PRODUCT = "NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S"
LLAMA, LLAMA_DEPLOYMENT = "llama-3-70b", "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
GPT4O, GPT4O_DEPLOYMENT = "gpt-4o", "openai/gpt-4o-2024-08-06"
# LiteLLM team ids are UUIDs; teams map them in config.
TEAM_IDS = {
    "research": "5f0c1d2e-8a41-4c3b-9e57-0d6a2b7c9e11",
    "vision": "a93e7b20-14cd-4f6a-8b02-c5d1e9f4a733",
}


# --- the cluster, as OpenCost prices it ---------------------------------------------------

# (node, namespace, controller, GPUs, price per GPU-hour): every GPU of both nodes is busy.
PODS = (
    ("node-h", "ns-research", "train-llm", 1, 2.10),
    ("node-h", "ns-vision", "finetune-vit", 1, 2.10),  # the H100 vision borrows
    ("node-l", "ns-vision", "detector", 1, 0.90),
    ("node-l", "ns-serving", "vllm-llama-3-70b", 1, 0.90),
)
NODES = (("node-h", H100_PRODUCT, 2, 2.10), ("node-l", L40S_PRODUCT, 2, 0.90))


def _window(request: httpx.Request) -> tuple[int, int]:
    start, end = request.url.params["window"].split(",")
    return int(start), int(end)


def _allocation(node: str, ns: str, controller: str, gpus: int, price: float, hours: float) -> Any:
    # Fields OpenCost sends that the exporter does not read ride along, as on a real cluster.
    return {
        "name": f"{node}/{ns}/{controller}",
        "properties": {
            "cluster": "cluster-two",
            "node": node,
            "namespace": ns,
            "controller": controller,
            "controllerKind": "deployment" if ns == "ns-serving" else "job",
            "labels": {"app_kubernetes_io_name": controller},
            "namespaceLabels": {"kubernetes_io_metadata_name": ns},
        },
        "minutes": hours * 60,
        "cpuCores": 0,
        "cpuCost": 0,
        "ramCost": 0,
        "gpuCount": gpus,
        "gpuHours": round(gpus * hours, 5),
        "gpuCost": round(gpus * price * hours, 5),
        "gpuCostAdjustment": 0,
        "pvCost": 0,
        "networkCost": 0,
        "loadBalancerCost": 0,
        "sharedCost": 0,
        "externalCost": 0,
        "totalCost": round(gpus * price * hours, 5),
        "gpuAllocation": {"isGPUShared": False, "gpuRequestAverage": gpus},
    }


def _set(start: int, end: int) -> dict[str, Any]:
    """One set of `/allocation`: every pod over [start, end), its step window on each record."""
    hours = (end - start) / 3600
    window = {
        "start": datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": datetime.fromtimestamp(end, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    step = {f"{p[0]}/{p[1]}/{p[2]}": _allocation(*p, hours) for p in reversed(PODS)}
    # Every GPU is in use, so nothing is idle.
    step["__idle__"] = {"name": "__idle__", "cpuCost": 0, "gpuCost": 0, "ramCost": 0}
    return {name: {**record, "window": window} for name, record in step.items()}


def opencost_api(request: httpx.Request) -> httpx.Response:
    """OpenCost's `/allocation` (one set, or a set per day with `step=1d`) and `/assets`."""
    start, end = _window(request)
    hours = (end - start) / 3600
    if request.url.path == "/allocation":
        day = 86400 if request.url.params.get("step") == "1d" else end - start
        sets = [_set(s, min(s + day, end)) for s in range(start, end, day)]
        return httpx.Response(200, json={"code": 200, "data": sets})
    assets: dict[str, Any] = {
        f"cluster-two/node/{name}": {
            "type": "Node",
            "properties": {"category": "Compute", "name": name, "providerID": f"i-{name}"},
            "labels": {"nvidia_com_gpu_product": product, "kubernetes_io_hostname": name},
            "gpuCount": count,
            "GPUHours": count * hours,
            "gpuCost": round(count * price * hours, 6),
            "cpuCost": 0,
            "ramCost": 0,
        }
        for name, product, count, price in NODES
    }
    assets["cluster-two/disk/pv-1"] = {"type": "Disk", "properties": {"name": "pv-1"}}
    return httpx.Response(200, json={"code": 200, "data": assets})


# --- Kueue: quota per flavor, in one cohort -----------------------------------------------

# (cluster queue, flavor, nominal GPUs, GPUs in use, GPUs borrowed)
QUOTA = (
    ("cq-research", "h100", "2", "1", "0"),
    ("cq-vision", "l40s", "1", "1", "0"),
    ("cq-vision", "h100", "0", "1", "1"),  # no H100 of its own: it may only borrow one
    ("cq-platform", "l40s", "1", "1", "0"),
)


def _cluster_queue(name: str) -> Any:
    mine = [q for q in QUOTA if q[0] == name]
    flavors = [
        {
            "name": flavor,
            "resources": [
                {"name": "cpu", "nominalQuota": "64"},
                {"name": "memory", "nominalQuota": "512Gi"},
                {"name": GPU, "nominalQuota": nominal},
            ],
        }
        for _, flavor, nominal, _, _ in mine
    ]
    usage = [
        {
            "name": flavor,
            "resources": [{"name": GPU, "total": used, "borrowed": borrowed}],
        }
        for _, flavor, _, used, borrowed in reversed(mine)
    ]
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name, "resourceVersion": "4711"},
        "spec": {
            "cohortName": "gpus",
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": flavors}],
        },
        "status": {"flavorsUsage": usage, "admittedWorkloads": len(mine)},
    }


def _flavor(name: str, product: str) -> Any:
    labels = {"nvidia.com/gpu.product": product}
    return {"metadata": {"name": name}, "spec": {"nodeLabels": labels, "tolerations": []}}


def kueue_api(request: httpx.Request) -> httpx.Response:
    """The Kubernetes API's ClusterQueue and ResourceFlavor lists (one page each)."""
    plural = request.url.path.rsplit("/", 1)[1]
    if plural == "clusterqueues":
        items = [_cluster_queue(q) for q in ("cq-vision", "cq-research", "cq-platform")]
    else:
        items = [_flavor("l40s", L40S_PRODUCT), _flavor("h100", H100_PRODUCT)]
    return httpx.Response(200, json={"kind": "List", "metadata": {}, "items": items})


# --- LiteLLM: public names over deployments, in USD ---------------------------------------

# (date, team, API key hash, public name, deployment, prompt, completion, requests, USD)
ROWS = (
    ("2026-11-03", "research", "k-res", LLAMA, LLAMA_DEPLOYMENT, 18_000_000, 6_000_000, 900, 18.0),
    ("2026-11-09", "research", "k-res", LLAMA, LLAMA_DEPLOYMENT, 12_000_000, 4_000_000, 600, 12.0),
    ("2026-11-09", "research", "k-res", GPT4O, GPT4O_DEPLOYMENT, 9_000_000, 3_000_000, 400, 120.0),
    ("2026-11-03", "vision", "k-vis", LLAMA, LLAMA_DEPLOYMENT, 14_000_000, 2_000_000, 700, 10.0),
    ("2026-11-03", "vision", "k-vis", GPT4O, GPT4O_DEPLOYMENT, 2_000_000, 1_000_000, 100, 30.0),
)
_Row = tuple[str, str, str, str, str, int, int, int, float]


def _metrics(rows: list[_Row]) -> dict[str, Any]:
    prompt, completion = sum(r[5] for r in rows), sum(r[6] for r in rows)
    return {
        "spend": sum(r[8] for r in rows),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cache_read_input_tokens": 0,
        "api_requests": sum(r[7] for r in rows),
        "successful_requests": sum(r[7] for r in rows),
        "failed_requests": 0,
    }


def _entries(rows: list[_Row], name: Callable[[_Row], str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted({name(r) for r in rows}):
        mine = [r for r in rows if name(r) == key]
        keys = {
            k: {
                "metrics": _metrics([r for r in mine if r[2] == k]),
                "metadata": {"key_alias": k, "team_id": TEAM_IDS[mine[0][1]], "key_exists": True},
            }
            for k in sorted({r[2] for r in mine})
        }
        out[key] = {"metrics": _metrics(mine), "metadata": {}, "api_key_breakdown": keys}
    return out


def _day(date: str) -> Any:
    rows = [r for r in ROWS if r[0] == date]
    entities = _entries(rows, lambda r: TEAM_IDS[r[1]])
    for team_id, entry in entities.items():
        alias = next(t for t, i in TEAM_IDS.items() if i == team_id).title()
        entry["metadata"] = {"team_alias": alias}
    return {
        "date": date,
        "metrics": _metrics(rows),
        "breakdown": {
            "entities": entities,
            "models": _entries(rows, lambda r: r[4]),
            "model_groups": _entries(rows, lambda r: r[3]),
            "providers": {"openai": {"metrics": _metrics(rows)}},
        },
    }


def litellm_api(request: httpx.Request) -> httpx.Response:
    """LiteLLM's team list and aggregated daily activity for the dates asked."""
    if request.url.path == "/v2/team/list":
        teams = [{"team_id": i, "team_alias": t.title(), "spend": 0} for t, i in TEAM_IDS.items()]
        return httpx.Response(200, json={"teams": teams, "total": 2, "page": 1, "total_pages": 1})
    assert request.url.path == "/team/daily/activity/aggregated"
    first, last = request.url.params["start_date"], request.url.params["end_date"]
    dates = sorted({r[0] for r in ROWS if first <= r[0] <= last}, reverse=True)  # newest first
    return httpx.Response(200, json={"results": [_day(d) for d in dates], "metadata": {}})
