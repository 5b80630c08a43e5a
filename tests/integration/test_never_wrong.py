"""A number served with the source up is never wrong: hostile and broken upstreams, each against
a control exporter beside it.

Two refreshers read the same frozen fakes through fault-injecting proxies: the control's pass
everything through, the faulted one's rewrite what the case says. After each fault the faulted
exporter serves exactly the control's figures, or marks the source down (with the reason
counted) and keeps its last complete figures; it never serves a different number with the
source up.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo import fake_dcgm, fake_kube
from chargeback_demo.cluster import CLUSTER
from chargeback_demo.faultproxy import FaultProxy
from chargeback_demo.httpfake import FakeServer
from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter import redact
from exporter.cli import main
from exporter.config.schema import Config
from exporter.serve.refresher import Refresher
from exporter.serve.wiring import make_refresher
from tests.conftest import CLOCK

SOURCES = ("opencost", "dcgm", "kueue", "litellm")
Series = dict[str, dict[tuple[tuple[str, str], ...], float]]
Editor = Callable[[str, bytes], bytes]
MTD = "chargeback_team_cost_month_to_date"


def served(refresher: Refresher) -> Series:
    """Every series the refresher serves, by family and labels."""
    out: Series = {}
    for family in text_string_to_metric_families(refresher.exposition.text.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def figures(series: Series) -> Series:
    """The figures, without the exporter's own health (durations, timestamps, counters)."""
    return {
        name: values
        for name, values in series.items()
        if not name.startswith(("chargeback_source_", "chargeback_build_"))
    }


def up(series: Series, source: str) -> float:
    return series["chargeback_source_up"][(("source", source),)]


def counted(series: Series, family: str, source: str, reason: str) -> float:
    return series[family].get((("reason", reason), ("source", source)), 0.0)


def month_to_date(series: Series, team: str) -> float:
    return math.fsum(v for k, v in series[MTD].items() if dict(k)["team"] == team)


@dataclass
class Pair:
    """The control and the faulted exporter, each reading the fakes through its own proxies."""

    stack: DemoStack
    control_proxies: dict[str, FaultProxy]
    proxies: dict[str, FaultProxy]
    control: Refresher
    faulted: Refresher

    def edit(self, source: str, editor: Editor, *, control: bool = False) -> None:
        """Rewrite every answer of `source` to the faulted exporter (or to the control)."""
        proxy = (self.control_proxies if control else self.proxies)[source]
        proxy.editor = editor
        proxy.set("edit")

    def heal(self, source: str) -> None:
        self.proxies[source].set("")

    def refresh(self, source: str | None = None) -> tuple[Series, Series]:
        """Refresh both (one source, or all), rebuild, and return (control, faulted)."""
        for refresher in (self.control, self.faulted):
            if source is None:
                refresher.refresh_all()
            else:
                refresher.refresh(source)
                refresher.rebuild()
        return served(self.control), served(self.faulted)


def _config(
    urls: dict[str, str], secrets: str, change: Callable[[dict[str, Any]], None] | None
) -> Config:
    data: dict[str, Any] = demo_config_dict(urls, secrets)
    for name in SOURCES:
        data["sources"][name]["timeout"] = "2s"
    if "dcgm2" in urls:  # a second node's dcgm-exporter, listed after the demo node's
        data["sources"]["dcgm"]["urls"].append(urls["dcgm2"] + "/metrics")
    data["sources"]["litellm"]["page_size"] = 2  # three teams: two pages
    if change is not None:
        change(data)
    return Config.model_validate(data)


# A second GPU node with a single GPU, held by research's training job as the demo node's GPU 0.
SECOND_NODE = replace(CLUSTER, node="gpu-node-2", gpu_count=1)


@pytest.fixture
def pair_of(stack: DemoStack) -> Iterator[Callable[..., Pair]]:
    """Build a Pair: `change` edits both configs, `faulted_urls` moves the faulted one;
    `second_node` lists a second dcgm-exporter (proxied as "dcgm2") after the demo node's."""
    made: list[Pair] = []
    second_dcgm = FakeServer(fake_dcgm.make_handler(SECOND_NODE, CLOCK)).start()

    def build(
        change: Callable[[dict[str, Any]], None] | None = None,
        faulted_urls: dict[str, str] | None = None,
        faulted_secrets: str | None = None,
        vllm: bool = False,
        second_node: bool = False,
    ) -> Pair:
        names = (*SOURCES, "vllm") if vllm else SOURCES
        upstreams = dict(stack.urls)
        if second_node:
            names = (*names, "dcgm2")
            upstreams["dcgm2"] = second_dcgm.url
        control_proxies = {n: FaultProxy(upstreams[n], delay=0.05).start() for n in names}
        proxies = {n: FaultProxy(upstreams[n], delay=0.05).start() for n in names}
        control_urls = {n: p.url for n, p in control_proxies.items()}
        urls = {n: p.url for n, p in proxies.items()} | (faulted_urls or {})
        secrets = str(stack.secrets)
        pair = Pair(
            stack,
            control_proxies,
            proxies,
            make_refresher(_config(control_urls, secrets, change), clock=CLOCK),
            make_refresher(_config(urls, faulted_secrets or secrets, change), clock=CLOCK),
        )
        made.append(pair)
        return pair

    yield build
    for pair in made:
        pair.control.stop()
        pair.faulted.stop()
        for proxy in (*pair.control_proxies.values(), *pair.proxies.values()):
            proxy.set("")
            proxy.stop()
    second_dcgm.stop()


@pytest.fixture
def pair(pair_of: Callable[..., Pair]) -> Pair:
    return pair_of()


def assert_down_and_kept(control: Series, faulted: Series, source: str, reason: str) -> None:
    """The source is down with `reason` counted; every figure is still the control's."""
    assert up(faulted, source) == 0.0
    assert counted(faulted, "chargeback_source_errors_total", source, reason) == 1.0
    assert figures(faulted) == figures(control)
    for other in SOURCES:
        assert up(faulted, other) == (0.0 if other == source else 1.0)


# --- JSON and text rewriting ----------------------------------------------------------------


def json_editor(change: Callable[[str, Any], Any], where: str = "") -> Editor:
    """Rewrite JSON answers whose path starts with `where`; NaN and Infinity are kept as written."""

    def edit(path: str, body: bytes) -> bytes:
        if not path.startswith(where):
            return body
        return json.dumps(change(path, json.loads(body))).encode()

    return edit


def every(key: str, value: Any) -> Callable[[str, Any], Any]:
    """Set every `key` anywhere in a JSON document to `value`."""

    def change(path: str, doc: Any) -> Any:
        del path
        if isinstance(doc, dict):
            return {k: value if k == key else change("", v) for k, v in doc.items()}
        if isinstance(doc, list):
            return [change("", v) for v in doc]
        return doc

    return change


def renamed(old: str, new: str) -> Editor:
    """Every occurrence of the JSON string `old` (a value or a key) becomes `new`."""

    def edit(path: str, body: bytes) -> bytes:
        del path
        return body.replace(json.dumps(old).encode(), json.dumps(new).encode())

    return edit


# --- 1. redaction where text is quoted, never in data ------------------------------------------


@pytest.mark.parametrize("where", ["file", "env"])
def test_a_secret_too_short_to_tell_from_data_is_refused_by_name(
    stack: DemoStack,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    # `gpu` as a token once masked every "gpu" in every upstream body, zeroing GPU cost.
    data = demo_config_dict(stack.urls, str(stack.secrets))
    if where == "file":
        (tmp_path / "kube-token").write_text("gpu\n", encoding="utf-8")
        data["sources"]["kueue"]["token_file"] = str(tmp_path / "kube-token")
        named = f"secret file {tmp_path / 'kube-token'}"
    else:
        monkeypatch.setenv("CHARGEBACK_TEST_KEY", "tok")
        del data["sources"]["litellm"]["api_key_file"]
        data["sources"]["litellm"]["api_key_env"] = "CHARGEBACK_TEST_KEY"
        named = "environment variable CHARGEBACK_TEST_KEY"
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["--config.file", str(path), "--once"], CLOCK) == 2
    err = capsys.readouterr().err
    assert named in err
    assert "too short" in err


def test_a_secret_that_is_also_data_never_rewrites_the_data(
    stack: DemoStack, pair_of: Callable[..., Pair], tmp_path: Path
) -> None:
    # The Kubernetes token reads like a timestamp LiteLLM's answers hold (the budgets' next
    # reset): a secret is masked where text is quoted (logs, errors, metrics), never in what a
    # source parses, so LiteLLM's budgets stay whole.
    token = "2026-12-01T00:00:00Z"
    (tmp_path / "kube-token").write_text(token, encoding="utf-8")
    (tmp_path / "litellm-key").write_bytes((stack.secrets / "litellm-key").read_bytes())
    kube = FakeServer(fake_kube.make_handler(CLUSTER, CLOCK, token=token)).start()
    try:
        pair = pair_of(faulted_urls={"kueue": kube.url}, faulted_secrets=str(tmp_path))
        control, faulted = pair.refresh()
    finally:
        kube.stop()
        redact.forget("kueue bearer token")
    for source in SOURCES:
        assert up(faulted, source) == 1.0
    assert figures(faulted) == figures(control)
    assert (("team", "research"),) in faulted["chargeback_llm_budget_reset_timestamp_seconds"]


# --- 2. dropped money is never silent -----------------------------------------------------------

BAD_NUMBERS = [
    ("spend", "12.5"),
    ("spend", math.nan),
    ("spend", 1e308),
    ("spend", -1.0),
    ("prompt_tokens", math.nan),
    ("completion_tokens", math.inf),
]


@pytest.mark.parametrize(("key", "value"), BAD_NUMBERS)
def test_litellm_rows_that_all_carry_a_bad_number_take_the_source_down(
    pair: Pair, caplog: pytest.LogCaptureFixture, key: str, value: object
) -> None:
    caplog.set_level(logging.WARNING)
    pair.refresh()
    pair.edit("litellm", json_editor(every(key, value)))
    control, faulted = pair.refresh("litellm")
    assert_down_and_kept(control, faulted, "litellm", "malformed")
    dropped = faulted["chargeback_source_records_dropped_total"]
    assert sum(v for k, v in dropped.items() if dict(k)["source"] == "litellm") > 0
    assert re.search(r"source=litellm refresh failed reason=malformed .*dropped", caplog.text)


def test_one_litellm_row_with_a_bad_number_keeps_the_last_complete_figures(pair: Pair) -> None:
    pair.refresh()

    def one_bad(path: str, doc: Any) -> Any:
        del path
        for day in doc.get("results", []):
            for entry in day["breakdown"]["entities"].values():
                entry["metrics"]["spend"] = -1.0
                return doc
        return doc

    pair.edit("litellm", json_editor(one_bad, "/team/daily/activity"))
    control, faulted = pair.refresh("litellm")
    assert_down_and_kept(control, faulted, "litellm", "malformed")


def test_bad_numbers_from_the_first_read_serve_no_llm_figure(pair: Pair) -> None:
    pair.edit("litellm", json_editor(every("spend", math.nan)))
    control, faulted = pair.refresh()
    assert up(faulted, "litellm") == 0.0
    assert counted(faulted, "chargeback_source_errors_total", "litellm", "malformed") == 1.0
    # The completion weight is the config's or vLLM's, never LiteLLM's: it stays.
    from_litellm = [n for n in faulted if n.startswith("chargeback_llm_") and "_weight" not in n]
    assert not from_litellm
    assert {k for k in faulted[MTD] if dict(k)["component"].startswith("llm")} == set()
    assert month_to_date(control, "research") > month_to_date(faulted, "research")


# --- 5. a corrupt DCGM sample is a corrupt sample -----------------------------------------------


def _corrupt_gpu(gpu: str) -> Editor:
    """dcgm-exporter's blank marker 4294967295 (a uint32 -1) for one GPU's utilisation."""
    marker = f'{{gpu="{gpu}",'.encode()

    def edit(path: str, body: bytes) -> bytes:
        del path
        lines = []
        for line in body.split(b"\n"):
            if line.startswith((b"DCGM_FI_DEV_GPU_UTIL", b"DCGM_FI_PROF_GR_ENGINE_ACTIVE")) and (
                marker in line
            ):
                line = line.rsplit(b" ", 1)[0] + b" 4294967295"
            lines.append(line)
        return b"\n".join(lines)

    return edit


def test_a_corrupt_utilisation_sample_keeps_its_gpu_and_the_last_figure(pair: Pair) -> None:
    pair.refresh()
    pair.edit("dcgm", _corrupt_gpu("3"))  # search's GPU
    control, faulted = pair.refresh("dcgm")
    assert up(faulted, "dcgm") == 1.0
    assert figures(faulted) == figures(control)
    assert counted(faulted, "chargeback_source_records_dropped_total", "dcgm", "out_of_range") > 0


def test_a_corrupt_sample_on_the_first_read_leaves_the_gpu_counted_its_use_unknown(
    pair: Pair,
) -> None:
    pair.edit("dcgm", _corrupt_gpu("3"))
    control, faulted = pair.refresh()
    assert up(faulted, "dcgm") == 1.0
    gpus = "chargeback_gpus"
    assert sum(faulted[gpus].values()) == sum(control[gpus].values()) == 4.0
    ratio = "chargeback_team_gpu_utilization_ratio"
    assert (("team", "search"),) in control[ratio]
    assert faulted[ratio] == {k: v for k, v in control[ratio].items() if k != (("team", "search"),)}
    waste = "chargeback_team_gpu_waste_cost_per_hour"
    assert (("team", "search"),) not in faulted.get(waste, {})


# --- 6. signs and bounds ------------------------------------------------------------------------


def _opencost(namespace: str, **fields: float) -> Editor:
    """Set `fields` on every allocation of `namespace` in OpenCost's allocation sets."""

    def change(path: str, doc: Any) -> Any:
        del path
        for step in doc.get("data") or []:
            for allocation in (step or {}).values():
                if allocation.get("properties", {}).get("namespace") == namespace:
                    for name, value in fields.items():
                        allocation[name] = value
        return doc

    return json_editor(change, "/allocation")


def test_a_negative_cost_is_refused(pair: Pair) -> None:
    pair.refresh()
    pair.edit("opencost", _opencost("ns-search", gpuCost=-1e6))
    control, faulted = pair.refresh("opencost")
    assert_down_and_kept(control, faulted, "opencost", "malformed")
    assert counted(faulted, "chargeback_source_records_dropped_total", "opencost", "out_of_range")


def test_a_negative_adjustment_is_what_opencost_documents(pair: Pair) -> None:
    # A credit: the adjustment takes back what the cost added, so the component is unchanged.
    pair.refresh()

    def credit(path: str, doc: Any) -> Any:
        del path
        for step in doc.get("data") or []:
            for allocation in (step or {}).values():
                if allocation.get("properties", {}).get("namespace") == "ns-search":
                    allocation["cpuCost"] = allocation["cpuCost"] + 2.0
                    allocation["cpuCostAdjustment"] = -2.0
        return doc

    pair.edit("opencost", json_editor(credit, "/allocation"))
    control, faulted = pair.refresh("opencost")
    assert up(faulted, "opencost") == 1.0
    for team in ("research", "search", "vision"):
        assert month_to_date(faulted, team) == pytest.approx(month_to_date(control, team))


# --- 3. sudden emptiness is confirmed ------------------------------------------------------------


def _no_teams_no_activity(path: str, doc: Any) -> Any:
    if path.startswith("/v2/team/list"):
        return {**doc, "teams": [], "total": 0, "total_pages": 0}
    return {**doc, "results": []}


def _no_cluster_queues(path: str, doc: Any) -> Any:
    if "/clusterqueues" not in path:
        return doc
    return {**doc, "items": [], "metadata": {"resourceVersion": "1"}}


@pytest.mark.parametrize(
    ("source", "change", "families"),
    [
        ("litellm", _no_teams_no_activity, ("chargeback_llm_budget_spend",)),
        ("kueue", _no_cluster_queues, ("chargeback_quota_nominal", "chargeback_quota_usage")),
    ],
)
def test_an_empty_read_after_data_waits_for_a_second_one(
    pair: Pair, source: str, change: Callable[[str, Any], Any], families: tuple[str, ...]
) -> None:
    pair.refresh()
    pair.edit(source, json_editor(change))
    control, faulted = pair.refresh(source)
    assert_down_and_kept(control, faulted, source, "incomplete")
    # A second read that says the same confirms it: the upstream really holds nothing now.
    control, faulted = pair.refresh(source)
    assert up(faulted, source) == 1.0
    for family in families:
        assert family in control
        assert family not in faulted


# --- 4. a bad name fails its record, not the exposition -----------------------------------------

LONG = "x" * 10_000


@pytest.mark.parametrize(
    ("source", "editor"),
    [
        ("litellm", renamed("llama-3-70b", "bad\udc80name")),
        ("litellm", renamed("gpt-4o", LONG)),
        ("litellm", renamed("research", LONG)),  # research's team alias
        ("kueue", renamed("cq-research", LONG)),
        ("kueue", renamed("gpu-pool", LONG)),  # the cohort
        ("opencost", renamed("ns-research", LONG)),
        ("dcgm", lambda path, body: body.replace(b'"ns-search"', f'"{LONG}"'.encode())),
    ],
    ids=[
        "model-surrogate",
        "model-long",
        "alias-long",
        "queue-long",
        "cohort-long",
        "namespace-long",
        "dcgm-namespace-long",
    ],
)
def test_a_hostile_name_fails_its_record_not_the_exposition(
    pair: Pair, source: str, editor: Editor
) -> None:
    pair.refresh()
    pair.edit(source, editor)
    control, faulted = pair.refresh(source)
    assert_down_and_kept(control, faulted, source, "malformed")
    assert sum(faulted["chargeback_build_errors_total"].values()) == 0.0
    assert all(len(v) < 1000 for labels in figures(faulted).values() for k in labels for _, v in k)


# --- 7. every owner named -----------------------------------------------------------------------


def _undeclare_search(data: dict[str, Any]) -> None:
    for team in data["teams"]:
        if team["name"] == "search":
            del team["litellm_teams"]


def _alias_search_by_id(path: str, doc: Any) -> Any:
    """LiteLLM's answers with search's team carrying its own id as its alias."""
    del path
    for team in doc.get("teams", []):
        if team["team_id"] == "c0a8d9e3-search":
            team["team_alias"] = "c0a8d9e3-search"
    for day in doc.get("results", []):
        entity = day["breakdown"]["entities"].get("c0a8d9e3-search")
        if entity is not None:
            entity["metadata"]["team_alias"] = "c0a8d9e3-search"
    return doc


def test_an_undeclared_litellm_team_without_an_alias_is_its_own_team(
    pair_of: Callable[..., Pair],
) -> None:
    pair = pair_of(change=_undeclare_search)
    # The control names the team by an alias equal to its id; the faulted one has no alias.
    pair.edit("litellm", json_editor(_alias_search_by_id), control=True)
    control, faulted = pair.refresh()
    assert up(faulted, "litellm") == 1.0
    assert figures(faulted) == figures(control)
    spend = faulted["chargeback_llm_spend_month_to_date"]
    assert (("model", "llama-3-70b"), ("team", "c0a8d9e3-search")) in spend


# --- 8. a measured weight is applied only from plausible inputs ---------------------------------

WEIGHT = "chargeback_llm_completion_weight"
FALLBACK = "chargeback_llm_completion_weight_fallback"
LLAMA = ("model", "llama-3-70b")
# What a measured weight moves: the weights themselves, and every figure the ledger splits by them.
WEIGHT_FAMILIES = (WEIGHT, FALLBACK, "chargeback_llm_seconds_per_token")


def _vllm_query(path: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(path).query).items()}


def _generation_reads_one(path: str, body: bytes) -> bytes:
    """The generation token counter's increase reads 1: a new replica, a reset on one counter."""
    if "vllm:request_generation_tokens_sum" not in _vllm_query(path).get("query", ""):
        return body
    doc = json.loads(body)
    for sample in doc["data"]["result"]:
        sample["value"][1] = "1"
    return json.dumps(doc).encode()


def _phases_swapped(upstream: str) -> Editor:
    """vLLM before #10853: prefill time in the decode histogram and decode time in prefill's."""
    swap = {
        "vllm:request_prefill_time_seconds_sum": "vllm:request_decode_time_seconds_sum",
        "vllm:request_decode_time_seconds_sum": "vllm:request_prefill_time_seconds_sum",
    }

    def edit(path: str, body: bytes) -> bytes:
        params = _vllm_query(path)
        for mine, theirs in swap.items():
            if mine in params.get("query", ""):
                params["query"] = params["query"].replace(mine, theirs)
                return httpx.get(f"{upstream}/api/v1/query", params=params).content
        return body

    return edit


def _configured_weight(data: dict[str, Any]) -> None:
    data["llm_models"][0]["self_hosted"]["weight"] = "configured"


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("generation-reads-1", "too_few_tokens"), ("phases-swapped", "inverted_phases")],
)
def test_an_implausible_measured_weight_falls_back_with_its_reason(
    stack: DemoStack, pair_of: Callable[..., Pair], fault: str, reason: str
) -> None:
    # Before: the faulted exporter applied 2,708,625,000 here (527,616,577 over the span the
    # issue read) or 0.2081 (swapped) where the control applies 50, with vLLM up, moving
    # serving cost between teams.
    pair = pair_of(vllm=True)
    pair.refresh()
    editor = _generation_reads_one if fault == "generation-reads-1" else None
    pair.edit("vllm", editor or _phases_swapped(stack.urls["vllm"]))
    control, faulted = pair.refresh("vllm")
    assert control[WEIGHT][(("basis", "applied"), LLAMA)] == pytest.approx(50.0)
    assert up(faulted, "vllm") == 1.0
    # The configured weight applies, the fallback says why, and the refused figure is not served.
    assert faulted[WEIGHT] == {
        (("basis", "configured"), LLAMA): 3.0,
        (("basis", "applied"), LLAMA): 3.0,
    }
    assert faulted[FALLBACK] == {(LLAMA, ("reason", reason)): 1.0}
    assert "chargeback_llm_seconds_per_token" not in faulted
    # Every other figure is what an exporter asking for the configured weight serves.
    urls = {n: p.url for n, p in pair.control_proxies.items()}
    reference = make_refresher(_config(urls, str(stack.secrets), _configured_weight), clock=CLOCK)
    try:
        reference.refresh_all()
        expected = served(reference)
    finally:
        reference.stop()
    assert {n: v for n, v in figures(faulted).items() if n not in WEIGHT_FAMILIES} == {
        n: v for n, v in figures(expected).items() if n not in WEIGHT_FAMILIES
    }
    # Healed, the measured weight is the control's again.
    pair.heal("vllm")
    control, faulted = pair.refresh("vllm")
    assert figures(faulted) == figures(control)


# --- 9. power: a dropped sample is unknown, never less ------------------------------------------

H100 = "NVIDIA H100 80GB HBM3"
BLANK_WATTS = "140737488355328"  # DCGM's blank double (2**47), as very old builds printed it
ENERGY = (
    "chargeback_team_gpu_power_watts",
    "chargeback_team_gpu_energy_kwh_per_hour",
    "chargeback_team_gpu_energy_cost_per_hour",
    "chargeback_team_gpu_co2e_grams_per_hour",
)
BUILD = ("chargeback_gpu_price_build_watts", "chargeback_gpu_price_build_power_fallback")


def _power_reads(value: str, gpus: tuple[str, ...]) -> Editor:
    """DCGM_FI_DEV_POWER_USAGE of `gpus` (every GPU when empty) reads `value`."""
    markers = [f'{{gpu="{gpu}",'.encode() for gpu in gpus]

    def edit(path: str, body: bytes) -> bytes:
        del path
        lines = []
        for line in body.split(b"\n"):
            if line.startswith(b"DCGM_FI_DEV_POWER_USAGE{") and (
                not markers or any(m in line for m in markers)
            ):
                line = line.rsplit(b" ", 1)[0] + b" " + value.encode()
            lines.append(line)
        return b"\n".join(lines)

    return edit


def _power_basis(basis: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["gpu_price_build"][H100]["power"] = basis

    return change


def _teams_of(series: Series, family: str) -> set[str]:
    return {dict(k)["team"] for k in series.get(family, {})}


@pytest.mark.parametrize("basis", ["measured", "nameplate"])
@pytest.mark.parametrize(
    ("value", "gpus"),
    [
        ("NaN", ("2",)),
        ("NaN", ()),
        ("-5", ("2",)),
        ("-5", ()),
        (BLANK_WATTS, ("2",)),
        (BLANK_WATTS, ()),
    ],
    ids=["nan-one", "nan-all", "negative-one", "negative-all", "blank-one", "blank-all"],
)
def test_a_dropped_power_sample_is_unknown_never_less(
    stack: DemoStack,
    pair_of: Callable[..., Pair],
    basis: str,
    value: str,
    gpus: tuple[str, ...],
) -> None:
    # Before: the faulted exporter summed the GPUs left (research 1,581.61 -> 1,104.22 W in the
    # issue), their energy, kWh and CO2e, and built a measured price from the rest, source up.
    pair = pair_of(change=_power_basis(basis))
    pair.refresh()
    pair.edit("dcgm", _power_reads(value, gpus))
    control, faulted = pair.refresh("dcgm")
    assert up(faulted, "dcgm") == 1.0
    dropped = faulted["chargeback_source_records_dropped_total"]
    assert sum(v for k, v in dropped.items() if dict(k)["source"] == "dcgm") > 0
    # vision holds GPUs 1 and 2: with 2's sample dropped, 1's draw alone is not vision's draw.
    # A team holding a GPU whose sample was dropped has no power figure; the others keep theirs.
    unknown = {"vision"} if gpus else _teams_of(control, ENERGY[0])
    assert unknown <= _teams_of(control, ENERGY[0])
    for family in ENERGY:
        assert faulted.get(family, {}) == {
            k: v for k, v in control.get(family, {}).items() if dict(k)["team"] not in unknown
        }
    name = (("kind", "model"), ("name", H100))
    if basis == "measured":
        # The measured mean is not taken from what was left: the nameplate, and the reason.
        assert control["chargeback_gpu_price_build_watts"][(*name, ("power", "measured"))] > 0
        assert faulted["chargeback_gpu_price_build_watts"] == {(*name, ("power", "nameplate")): 700}
        assert faulted["chargeback_gpu_price_build_power_fallback"] == {
            (*name, ("reason", "sample_dropped")): 1.0
        }
        expected = _reference(stack, pair, _power_basis("nameplate"))
    else:
        assert "chargeback_gpu_price_build_power_fallback" not in faulted
        expected = control
    # Every other figure is the control's (with measured power: a nameplate exporter's).
    assert {n: v for n, v in figures(faulted).items() if n not in (*ENERGY, *BUILD)} == {
        n: v for n, v in figures(expected).items() if n not in (*ENERGY, *BUILD)
    }
    # Healed, every figure is the control's again.
    pair.heal("dcgm")
    control, faulted = pair.refresh("dcgm")
    assert figures(faulted) == figures(control)


def _reference(stack: DemoStack, pair: Pair, change: Callable[[dict[str, Any]], None]) -> Series:
    """What an exporter with `change` serves, reading the control's upstreams."""
    urls = {n: p.url for n, p in pair.control_proxies.items()}
    reference = make_refresher(_config(urls, str(stack.secrets), change), clock=CLOCK)
    try:
        reference.refresh_all()
        return served(reference)
    finally:
        reference.stop()


# --- 10. a read is complete or it is not; each endpoint judged on its own ------------------------


def _cut_after(prefix: bytes, gpus: int) -> Editor:
    """dcgm-exporter's body cut at a line boundary: after the `gpus`-th line starting `prefix`
    (0: before the family's HELP line). What is left still parses."""

    def edit(path: str, body: bytes) -> bytes:
        del path
        lines = body.split(b"\n")
        if gpus == 0:
            at = next(i for i, line in enumerate(lines) if line.startswith(b"# HELP " + prefix))
        else:
            at = [i for i, line in enumerate(lines) if line.startswith(prefix + b"{")][gpus - 1] + 1
        return b"\n".join(lines[:at]) + b"\n"

    return edit


@pytest.mark.parametrize(
    ("prefix", "gpus"),
    [
        (b"DCGM_FI_DEV_POWER_USAGE", 2),  # two GPUs' power, the other two's cut off
        (b"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 3),  # the last GPU's engine activity cut off
        (b"DCGM_FI_DEV_POWER_USAGE", 0),  # cut before the power family: consistent in itself
        (b"DCGM_FI_DEV_GPU_UTIL", 3),  # inside the first family: a GPU fewer
    ],
    ids=["in-power", "in-engine", "before-power", "a-gpu-fewer"],
)
def test_a_body_cut_at_a_line_boundary_fails_the_read(pair: Pair, prefix: bytes, gpus: int) -> None:
    # Before: the cut body was read as the whole state, source up: 4 GPUs' power missing and
    # research's power, energy, kWh and CO2e computed from what was left (issue 35).
    pair.refresh()
    pair.edit("dcgm", _cut_after(prefix, gpus))
    control, faulted = pair.refresh("dcgm")
    assert_down_and_kept(control, faulted, "dcgm", "incomplete")
    pair.heal("dcgm")
    control, faulted = pair.refresh("dcgm")
    assert figures(faulted) == figures(control)


def test_one_single_gpu_endpoint_all_corrupt_keeps_every_node_up(
    pair_of: Callable[..., Pair],
) -> None:
    # Before: the second node's one GPU, its every utilisation sample corrupt, failed its
    # endpoint and so the whole DCGM source: every node's GPUs went with it.
    pair = pair_of(second_node=True)
    pair.refresh()
    pair.edit("dcgm2", _corrupt_gpu("0"))
    control, faulted = pair.refresh("dcgm")
    assert up(faulted, "dcgm") == 1.0
    assert sum(faulted["chargeback_gpus"].values()) == sum(control["chargeback_gpus"].values())
    assert sum(control["chargeback_gpus"].values()) == 5.0
    # Its last good utilisation stands in (read at the same instant): every figure holds.
    assert figures(faulted) == figures(control)
    assert counted(faulted, "chargeback_source_records_dropped_total", "dcgm", "out_of_range") > 0


def test_one_single_gpu_endpoint_all_corrupt_on_the_first_read_is_its_gpus_use_unknown(
    pair_of: Callable[..., Pair],
) -> None:
    pair = pair_of(second_node=True)
    pair.edit("dcgm2", _corrupt_gpu("0"))
    control, faulted = pair.refresh()
    assert up(faulted, "dcgm") == 1.0
    # research holds GPU 0 of both nodes: its use is unknown, not its first node's alone.
    ratio, waste = (
        "chargeback_team_gpu_utilization_ratio",
        "chargeback_team_gpu_waste_cost_per_hour",
    )
    research = (("team", "research"),)
    assert research in control[ratio]
    assert faulted[ratio] == {k: v for k, v in control[ratio].items() if k != research}
    assert research not in faulted.get(waste, {})
    assert faulted["chargeback_gpus"] == control["chargeback_gpus"]
    others = {n for n in figures(control) if n not in (ratio, waste)}
    assert {n: faulted.get(n) for n in others} == {n: control[n] for n in others}


def test_a_failed_endpoint_stands_in_from_its_last_good_read(pair_of: Callable[..., Pair]) -> None:
    # The second node's body cut short: its GPU stands in, held by its pod, its last good
    # utilisation standing in for its use and its power unknown; the demo node's stays read.
    pair = pair_of(second_node=True)
    pair.refresh()
    pair.edit("dcgm2", _cut_after(b"DCGM_FI_DEV_POWER_USAGE", 0))
    control, faulted = pair.refresh("dcgm")
    assert up(faulted, "dcgm") == 1.0
    endpoints = faulted["chargeback_source_endpoints"]
    assert endpoints[(("source", "dcgm"), ("state", "failed"))] == 1.0
    assert endpoints[(("source", "dcgm"), ("state", "scraped"))] == 1.0
    # research's GPU on the second node has no power this refresh: no research power figure.
    for family in ENERGY:
        assert faulted.get(family, {}) == {
            k: v for k, v in control.get(family, {}).items() if dict(k)["team"] != "research"
        }
    assert {n: v for n, v in figures(faulted).items() if n not in ENERGY} == {
        n: v for n, v in figures(control).items() if n not in ENERGY
    }


def test_the_proxys_cut_fault_fails_the_dcgm_read(pair: Pair) -> None:
    # The fault proxy's own cut: the body's first half, whole lines, with its own length.
    pair.refresh()
    pair.proxies["dcgm"].set("cut")
    control, faulted = pair.refresh("dcgm")
    assert_down_and_kept(control, faulted, "dcgm", "incomplete")
