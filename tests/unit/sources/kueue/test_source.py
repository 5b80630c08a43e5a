"""The Kueue source: ClusterQueue pages, version fallback, quantities, RBAC errors, clients."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, KueueConfig, SourcesConfig
from exporter.errors import (
    ConfigError,
    RecordsDropped,
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamTooLarge,
)
from exporter.ledger.costs.quota import lend
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.kueue.source import KIND as KUEUE_KIND
from exporter.sources.kueue.source import build_client, parse_cluster_queue
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

GiB = 2.0**30
GPU = "nvidia.com/gpu"
TOKEN = "s3cret-token-0123456789"
BASE = "/apis/kueue.x-k8s.io"


def fetch(client: httpx.Client, cfg: KueueConfig) -> KueueSnapshot:
    """The source's fetch with a config holding only this section (Kueue has no window)."""
    config = Config(sources=SourcesConfig(kueue=cfg))
    return KUEUE_KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))


def status(code: int, reason: str, message: str) -> httpx.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    return httpx.Response(code, json={**body, "message": message, "reason": reason, "code": code})


def cq(
    name: str,
    version: str,
    cohort: str,
    groups: list[dict[str, Any]],
    usage: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceGroups": groups}
    if cohort:
        spec["cohortName" if version == "v1beta2" else "cohort"] = cohort
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }
    if usage is not None:
        obj["status"] = {"flavorsUsage": usage}
    return obj


def flavor(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": list(resources)}


def group(covered: list[str], *flavors: dict[str, Any]) -> dict[str, Any]:
    return {"coveredResources": covered, "flavors": list(flavors)}


def scenario(version: str) -> list[dict[str, Any]]:
    """Three queues: numeric and string quantities, limits set and unset, one without cohort."""
    a = cq(
        "cq-a",
        version,
        "pool",
        [
            group(
                ["cpu", "memory"],
                flavor(
                    "default-flavor",
                    {"name": "cpu", "nominalQuota": 32},
                    {"name": "memory", "nominalQuota": "128Gi"},
                ),
            ),
            group([GPU], flavor("h100", {"name": GPU, "nominalQuota": 4, "borrowingLimit": "2"})),
        ],
        usage=[
            flavor(
                "default-flavor",
                {"name": "cpu", "total": "30500m", "borrowed": "0"},
                {"name": "memory", "total": "120Gi", "borrowed": "0"},
            ),
            flavor("h100", {"name": GPU, "total": "6", "borrowed": "2"}),
        ],
    )
    b = cq(
        "cq-b",
        version,
        "pool",
        [group([GPU], flavor("h100", {"name": GPU, "nominalQuota": "4", "lendingLimit": 3}))],
        usage=[flavor("h100", {"name": GPU, "total": "1"})],  # borrowed omitted: 0
    )
    c = cq(
        "cq-c",
        version,
        "",
        [group([GPU], flavor("h100", {"name": GPU, "nominalQuota": "2"}))],
        usage=[flavor("h100", {"name": GPU, "total": "2", "borrowed": "0"})],
    )
    return [a, b, c]


EXPECTED = [
    QuotaRecord("cq-a", "pool", "default-flavor", "cpu", 32.0, usage=30.5),
    QuotaRecord("cq-a", "pool", "default-flavor", "memory", 128 * GiB, usage=120 * GiB),
    QuotaRecord("cq-a", "pool", "h100", GPU, 4.0, borrowing_limit=2.0, usage=6.0, borrowed=2.0),
    QuotaRecord("cq-b", "pool", "h100", GPU, 4.0, lending_limit=3.0, usage=1.0),
    QuotaRecord("cq-c", "", "h100", GPU, 2.0, usage=2.0),
]


# One ResourceFlavor with labels, one without (a CPU flavor); items as `kubectl get -o json`
# shows them, spec before metadata.
FLAVORS: list[dict[str, Any]] = [
    {
        "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
        "metadata": {"name": "h100", "resourceVersion": "7"},
        "kind": "ResourceFlavor",
    },
    {"spec": {}, "metadata": {"name": "default-flavor"}, "kind": "ResourceFlavor"},
]
EXPECTED_FLAVORS = (
    FlavorRecord("default-flavor"),
    FlavorRecord("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),
)


class ApiServer:
    """A MockTransport answer function that pages ClusterQueues and flavors like the API server."""

    def __init__(self, versions: tuple[str, ...], items: list[dict[str, Any]]) -> None:
        self.versions = versions
        self.lists: dict[str, list[dict[str, Any]]] = {
            "clusterqueues": items,
            "resourceflavors": FLAVORS,
        }
        self.seen: list[httpx.Request] = []
        self.expire_continue = 0

    def queue_requests(self) -> list[httpx.Request]:
        """The ClusterQueue list requests, in order."""
        return [r for r in self.seen if r.url.path.endswith("/clusterqueues")]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        _, _, _, version, plural = request.url.path.split("/")
        assert plural in self.lists
        if version not in self.versions:
            return status(404, "NotFound", "the server could not find the requested resource")
        limit = int(request.url.params["limit"])
        start = int(request.url.params.get("continue", "0") or 0)
        if start and self.expire_continue:
            self.expire_continue -= 1
            return status(410, "Expired", "The provided continue parameter is too old")
        items = self.lists[plural]
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "12345"}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        kind = "ClusterQueueList" if plural == "clusterqueues" else "ResourceFlavorList"
        return httpx.Response(200, json={"kind": kind, "metadata": meta, "items": page})


@pytest.fixture
def token_file(tmp_path: Path) -> str:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return str(path)


def client_for(server: Callable[[httpx.Request], httpx.Response], cfg: KueueConfig) -> httpx.Client:
    return build_client(cfg, transport=httpx.MockTransport(server))


# --- the hand-computed scenario ------------------------------------------------------------


def test_v1beta1_only_server_two_pages_numeric_and_string_quantities(token_file: str) -> None:
    server = ApiServer(("v1beta1",), scenario("v1beta1"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, page_size=2)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot == KueueSnapshot(tuple(EXPECTED), flavors=EXPECTED_FLAVORS)
    paths = [(r.url.path, r.url.params.get("continue")) for r in server.seen]
    # Flavors are read in the version the queues were found in, without a second fallback.
    assert paths == [
        (f"{BASE}/v1beta2/clusterqueues", None),
        (f"{BASE}/v1beta1/clusterqueues", None),
        (f"{BASE}/v1beta1/clusterqueues", "2"),
        (f"{BASE}/v1beta1/resourceflavors", None),
    ]
    # Lending: cq-a borrows 2; cq-b alone has lendable min(4 - 1, 3) = 3, so it lends 2.
    assert lend(snapshot.queues)[("cq-b", "h100", GPU)] == 2.0


def test_v1beta2_reads_cohort_name(token_file: str) -> None:
    server = ApiServer(("v1beta2", "v1beta1"), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert all("v1beta2" in r.url.path for r in server.seen)
    assert server.seen[0].url.params["limit"] == "500"
    assert snapshot.flavors == EXPECTED_FLAVORS


def test_pinned_v1beta1_never_asks_for_v1beta2(token_file: str) -> None:
    server = ApiServer(("v1beta2", "v1beta1"), scenario("v1beta1"))
    cfg = KueueConfig(url="https://k", token_file=token_file, api_version="v1beta1")
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).queues == tuple(EXPECTED)
    assert all("v1beta1" in r.url.path for r in server.seen)


def test_kueue_not_installed(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    with client_for(ApiServer((), []), cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert err.value.status == 404 and "is Kueue installed" in str(err.value)


def test_expired_continue_token_restarts_the_list_once(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    server.expire_continue = 1
    cfg = KueueConfig(url="https://k", token_file=token_file, page_size=2)
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).queues == tuple(EXPECTED)
    server.expire_continue = 2
    with client_for(server, cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert err.value.status == 410


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (
            403,
            "kueue: HTTP 403 listing clusterqueues.kueue.x-k8s.io: the exporter's service "
            "account needs list on clusterqueues in API group kueue.x-k8s.io",
        ),
        (401, "kueue: HTTP 401 listing clusterqueues.kueue.x-k8s.io: the API server rejected"),
    ],
)
def test_auth_errors_name_the_missing_permission_in_one_line(
    token_file: str, code: int, needle: str
) -> None:
    def deny(request: httpx.Request) -> httpx.Response:
        return status(code, "Forbidden", 'clusterqueues is forbidden: User "x" cannot list\nmore')

    cfg = KueueConfig(url="https://k", token_file=token_file)
    with client_for(deny, cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    message = str(err.value)
    assert message.startswith(needle) and "\n" not in message
    assert err.value.reason == "auth" and TOKEN not in message


def test_unset_limits_are_infinite_and_missing_status_is_zero() -> None:
    item = cq("q", "v1beta2", "", [group([GPU], flavor("f", {"name": GPU, "nominalQuota": "1"}))])
    (record,) = parse_cluster_queue(item)
    assert record.borrowing_limit == math.inf and record.lending_limit == math.inf
    assert (record.usage, record.borrowed) == (0.0, 0.0)


def good() -> dict[str, Any]:
    return scenario("v1beta2")[0]


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    item: dict[str, Any] = json.loads(json.dumps(good()))
    change(item)
    return item


@pytest.mark.parametrize(
    "item",
    [
        [],
        "cq",
        broken(lambda o: o.pop("metadata")),
        broken(lambda o: o["metadata"].update(name=7)),
        broken(lambda o: o["spec"].update(resourceGroups={})),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].update(
                nominalQuota="lots"
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].pop(
                "nominalQuota"
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].update(
                lendingLimit=True
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][0]["flavors"][0]["resources"].append(
                {"name": "cpu", "nominalQuota": 1}
            )
        ),
        broken(lambda o: o["status"].update(flavorsUsage=[{"name": "h100", "resources": 3}])),
        broken(lambda o: o["status"]["flavorsUsage"][1]["resources"][0].update(total="x")),
        broken(lambda o: o["spec"].update(cohortName=["pool"])),
    ],
)
def test_malformed_cluster_queues_raise_payload_errors(item: Any) -> None:
    with pytest.raises(UpstreamPayloadError):
        parse_cluster_queue(item)


@pytest.mark.parametrize(
    "body", [[], {"kind": "Status"}, {"items": 3}, {"items": [], "metadata": 1}]
)
def test_a_body_that_is_not_a_list_is_a_payload_error(token_file: str, body: Any) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    answer = httpx.MockTransport(lambda _: httpx.Response(200, json=body))
    with build_client(cfg, answer) as client, pytest.raises(UpstreamPayloadError):
        fetch(client, cfg)


def test_a_body_that_is_not_json_is_a_payload_error(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    answer = httpx.MockTransport(lambda _: httpx.Response(200, content=b"<html>login</html>"))
    not_json = "did not return JSON: '<html>login</html>'"
    with build_client(cfg, answer) as client, pytest.raises(UpstreamPayloadError, match=not_json):
        fetch(client, cfg)


# --- building clients ----------------------------------------------------------------------


def capture(seen: list[httpx.Request]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"metadata": {}, "items": []})

    return httpx.MockTransport(answer)


def test_in_cluster_client_rereads_the_rotating_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    (tmp_path / "token").write_text("first-sa-token-0001")
    seen: list[httpx.Request] = []
    cfg = KueueConfig(in_cluster=True)
    with build_client(cfg, capture(seen), service_account_dir=str(tmp_path)) as client:
        fetch(client, cfg)
        (tmp_path / "token").write_text("second-sa-token-0002")
        fetch(client, cfg)
        assert "first-sa" not in repr(client.auth) and "second-sa" not in repr(client.auth)
    assert str(seen[0].url).startswith("https://10.96.0.1:6443/apis/kueue.x-k8s.io/v1beta2/")
    tokens = [r.headers["authorization"] for r in seen]
    # Each refresh lists ClusterQueues and then ResourceFlavors.
    first, second = "Bearer first-sa-token-0001", "Bearer second-sa-token-0002"
    assert tokens == [first, first, second, second]


def test_in_cluster_outside_a_pod_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        build_client(KueueConfig(in_cluster=True))


def kubeconfig(tmp_path: Path, user: dict[str, Any]) -> str:
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "contexts": [
            {"name": "dev", "context": {"cluster": "dev", "user": "dev"}},
            {"name": "prod", "context": {"cluster": "prod", "user": "reader"}},
        ],
        "clusters": [
            {
                "name": "prod",
                "cluster": {"server": "https://api.prod:6443/", "certificate-authority-data": ca},
            }
        ],
        "users": [{"name": "reader", "user": user}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return str(path)


@pytest.mark.parametrize("user", [{"token": "kc-token-0123456789"}, {"tokenFile": "tok"}])
def test_kubeconfig_current_context_server_and_token(tmp_path: Path, user: dict[str, Any]) -> None:
    (tmp_path / "tok").write_text("kc-token-0123456789")
    cfg = KueueConfig(kubeconfig=kubeconfig(tmp_path, user))
    seen: list[httpx.Request] = []
    with build_client(cfg, capture(seen)) as client:
        fetch(client, cfg)
    assert str(seen[0].url).startswith("https://api.prod:6443/apis/")
    assert seen[0].headers["authorization"] == "Bearer kc-token-0123456789"


@pytest.mark.parametrize(
    "user", [{"auth-provider": {"name": "gcp"}}, {"username": "admin", "password": "pw"}]
)
def test_kubeconfig_unsupported_credentials(tmp_path: Path, user: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="not supported"):
        build_client(KueueConfig(kubeconfig=kubeconfig(tmp_path, user)))


def test_kubeconfig_missing_or_broken(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope: .*cannot read"):
        build_client(KueueConfig(kubeconfig=str(tmp_path / "nope")))
    (tmp_path / "bad").write_text("current-context: x\ncontexts: []\n")
    with pytest.raises(ConfigError, match="no context named 'x'"):
        build_client(KueueConfig(kubeconfig=str(tmp_path / "bad")))


def test_bad_ca_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("not a certificate")
    cfg = KueueConfig(url="https://k8s:6443", ca_file=str(tmp_path / "ca.crt"))
    with pytest.raises(ConfigError, match=r"ca\.crt is not a PEM certificate"):
        build_client(cfg)


def test_insecure_skip_verify_builds_without_a_ca() -> None:
    with build_client(KueueConfig(url="https://k8s:6443", insecure_skip_tls_verify=True)) as c:
        assert str(c.base_url) == "https://k8s:6443"


# --- per-resource truth and lists that do not add up ---------------------------------------


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


# --- Workloads beside quota -----------------------------------------------------------------

WORKLOAD_FIXTURE = Path(__file__).parents[3] / "fixtures" / "kueue" / "workload_preempted.json"
LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "LocalQueue",
    "metadata": {"namespace": "team-a", "name": "team-a-queue"},
    "spec": {"clusterQueue": "cq-a"},
}


class Forbidding(ApiServer):
    """An API server whose RBAC grants the quota lists but not Workloads."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/workloads"):
            self.seen.append(request)
            return status(403, "Forbidden", 'workloads.kueue.x-k8s.io is forbidden: User "x"')
        return super().__call__(request)


def test_workloads_are_read_with_their_local_queues_cluster_queue(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    server.lists["workloads"] = [json.loads(WORKLOAD_FIXTURE.read_text(encoding="utf-8"))]
    server.lists["localqueues"] = [LOCAL_QUEUE]
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, workloads=True)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert snapshot.scheduling is not None and snapshot.scheduling.missing == ()
    (w,) = snapshot.scheduling.workloads
    assert (w.key, w.cluster_queue, w.gpus, w.ran_seconds) == (
        "team-a/sample-job",
        "cq-a",
        3,
        10800,
    )


def test_workloads_refused_are_missing_and_the_quota_stays_whole(token_file: str) -> None:
    server = Forbidding(("v1beta2",), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, workloads=True)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert snapshot.scheduling is not None and snapshot.scheduling.missing == ("workloads",)


def test_workloads_are_not_listed_unless_asked_for(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file)
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).scheduling is None
    assert not any(r.url.path.endswith("/workloads") for r in server.seen)
