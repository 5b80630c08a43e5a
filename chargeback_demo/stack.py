"""Start every fake upstream of the simulated cluster and the config that points at them."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chargeback_demo import (
    fake_anthropic_costs,
    fake_dcgm,
    fake_kube,
    fake_kueue_metrics,
    fake_litellm,
    fake_openai_costs,
    fake_vllm,
)
from chargeback_demo.cluster import CLUSTER, Cluster
from chargeback_demo.fake_bills import USD_TO_EUR
from chargeback_demo.fake_focus_export import CLUSTER_TAG, write_export
from chargeback_demo.fake_opencost import FakeOpenCost
from chargeback_demo.httpfake import FakeServer
from exporter.clock import Clock, system_clock
from exporter.config.schema import Config

__all__ = ["DemoStack", "demo_config_dict"]

LITELLM_KEY = "sk-demo-viewer-key"  # a demo-only key for the fake proxy
KUBE_TOKEN = "demo-kube-api-token"  # a demo-only bearer token for the fake Kubernetes API
OPENAI_ADMIN_KEY = "sk-admin-demo-openai-costs"  # demo-only admin keys of the fake providers
ANTHROPIC_ADMIN_KEY = "sk-ant-admin01-demo-cost-report"
FOCUS_FOLDER = "focus-export"  # beside the secrets: where the fake cloud's export lands


def demo_config_dict(
    urls: dict[str, str],
    secrets: str = "",
    dcgm_prometheus: str | None = None,
    history: str | None = None,
    bills: bool = False,
    true_up: bool = False,
) -> dict[str, Any]:
    """The demo's config: three teams, one of them mapped by namespace only.

    With `dcgm_prometheus` (a Prometheus that scrapes the fake dcgm-exporter) DCGM is read
    through it, which also gives the month-to-date idle GPU-hours. With `history` (a
    Prometheus holding the exporter's own series, chargeback_demo.history) the report reads a
    closed month's GPU operation and quotas from it. With `bills`, the fake providers' cost
    APIs and the fake cloud's FOCUS export (written under `secrets`) are read too.
    """
    config: dict[str, Any] = {
        "currency": "EUR",
        "timezone": "Europe/Madrid",
        "idle_policy": "proportional",
        "teams": [
            {
                "name": "research",
                "namespaces": ["ns-research"],
                "cluster_queues": ["cq-research"],
                "litellm_teams": ["9f3c2a10-research"],
                "budget": {"gpu": 2300, "llm": 400},
            },
            {
                "name": "vision",
                "namespaces": ["ns-vision"],
                "cluster_queues": ["cq-vision"],
                "litellm_teams": ["vision"],
                "budget": {"gpu": 1300, "llm": 150},
            },
            {
                "name": "search",
                "namespaces": ["ns-search"],
                "cluster_queues": ["cq-search"],
                "litellm_teams": ["c0a8d9e3-search"],
                "budget": {"gpu": 1100},
            },
        ],
        "attribution": {
            "team_label_keys": ["team"],
            "fallback_label_keys": ["app.kubernetes.io/part-of"],
        },
        "sources": {
            "opencost": {"url": urls["opencost"], "interval": "15s", "max_staleness": "2m"},
        },
        "llm_completion_weight": 3.0,
        # The demo node's price built from its parts: 131,400 over 3 years = 5.00 an hour,
        # 4 x 700 W x PUE 1.25 x 0.10 a kWh = 0.35, operations 0.25: 5.60 a node, 1.40 a
        # GPU-hour (what the fake OpenCost charges, so the demo's figures stay as they were).
        "gpu_price_build": {
            "NVIDIA H100 80GB HBM3": {
                "node_capex": 131_400,
                "gpus_per_node": 4,
                "amortisation_years": 3,
                "availability": 1.0,
                "gpu_watts": 700,
                "pue": 1.25,
                "energy_price_per_kwh": 0.10,
                "node_operations_per_hour": 0.25,
            }
        },
        # Emissions of the GPUs' measured power (grams of CO2e per kWh of the grid).
        "grid_co2e_grams_per_kwh": 250,
        "llm_models": [
            {
                "model": "llama-3-70b",
                "self_hosted": {"namespace": "ns-search"},
                "publisher": "Meta",
                # Build or buy: what its tokens would cost at an API's list prices.
                "alternative": {"input_per_million": 0.90, "output_per_million": 0.90},
            },
            {"model": "gpt-4o", "external": True, "publisher": "OpenAI"},
        ],
        # Two dimensions beyond the team: product from a label, an annotation or a LiteLLM
        # tag; environment from a label or the namespace's annotation.
        "dimensions": [
            {
                "name": "product",
                "label_keys": ["producto", "product"],
                "annotation_keys": ["finops.io/product"],
                "litellm_tag_prefix": "product:",
            },
            {
                "name": "environment",
                "label_keys": ["entorno", "env"],
                "namespace_annotation_keys": ["finops.io/environment"],
            },
        ],
        # How the statements name the demo: the cluster, and the platform that runs it.
        "report": {"cluster": "demo-madrid", "provider": "Demo ML Platform"},
    }
    if history is not None:
        config["report"]["prometheus"] = {"url": history}
    if dcgm_prometheus is not None:
        # A static scrape keeps dcgm-exporter's own pod labels ("plain"); a 15 s step puts
        # the first idle GPU-hours on the dashboards within a minute of a fresh Prometheus.
        prometheus = {"url": dcgm_prometheus, "workload_labels": "plain", "step": "15s"}
        config["sources"]["dcgm"] = {"prometheus": prometheus, "interval": "10s"}
        # Right-sizing advice over the week the demo backfills (chargeback_demo.advice_history),
        # refreshed every two minutes so it shows soon after the backfill loads.
        config["advice"] = {"interval": "2m", "max_staleness": "10m"}
    elif "dcgm" in urls:
        config["sources"]["dcgm"] = {"urls": [urls["dcgm"] + "/metrics"], "interval": "10s"}
    if "kueue" in urls:
        config["sources"]["kueue"] = {
            "url": urls["kueue"],
            "token_file": f"{secrets}/kube-token",
            "interval": "15s",
            "page_size": 2,
            "workloads": True,
        }
    if "litellm" in urls:
        config["sources"]["litellm"] = {
            "url": urls["litellm"],
            "api_key_file": f"{secrets}/litellm-key",
            # The fake proxy prices its models in the demo's currency: nothing to convert.
            "currency": "EUR",
            "interval": "20s",
            "max_staleness": "2m",
        }
    if "kueue_metrics" in urls:
        config["sources"]["kueue_metrics"] = {"url": urls["kueue_metrics"], "interval": "15s"}
    if "vllm" in urls:
        # The Prometheus that scrapes search's vLLM: Llama's completion weight is measured
        # (50: 12.5 ms a completion token against 0.25 ms a prompt token) and applied.
        config["sources"]["vllm"] = {"url": urls["vllm"], "interval": "1m"}
        hosted = config["llm_models"][0]["self_hosted"]
        hosted.update({"weight": "measured", "served_model": fake_vllm.SERVED_MODEL})
    if bills:
        config["bills"] = _bills(urls, secrets, true_up)
    return config


def _bills(urls: dict[str, str], secrets: str, true_up: bool) -> dict[str, Any]:
    """The demo's bills: both LLM providers' cost APIs in USD, and the cloud's FOCUS export of
    the node in EUR, each read every 30 s so the demo shows them within a minute. With
    `true_up`, a closed month's report foots to OpenAI's and the cloud's invoices (the gateway
    records no Anthropic model, so Anthropic's bill has no team to true up onto)."""
    every = {"interval": "30s", "max_staleness": "5m"}
    trued = {"true_up": true_up}
    return {
        "currency_rates": {"USD": USD_TO_EUR},
        "sources": {
            "openai": {
                "type": "openai",
                "url": urls["openai_costs"],
                "admin_key_file": f"{secrets}/openai-admin-key",
                **every,
                **trued,
            },
            "anthropic": {
                "type": "anthropic",
                "url": urls["anthropic_costs"],
                "admin_key_file": f"{secrets}/anthropic-admin-key",
                **every,
            },
            "cloud": {
                "type": "focus",
                "path": f"{secrets}/{FOCUS_FOLDER}",
                "cluster_tag": "=".join(CLUSTER_TAG),
                **every,
                **trued,
            },
        },
    }


@dataclass
class DemoStack:
    """The running fakes; `config` points the exporter at them."""

    cluster: Cluster = CLUSTER
    clock: Clock = system_clock
    opencost: FakeOpenCost = field(init=False)
    servers: dict[str, FakeServer] = field(default_factory=dict)
    secrets: Path = field(init=False)
    # The fake dcgm-exporter's port (0: any), so a Prometheus configured first can scrape it,
    # and that Prometheus's URL, through which the exporter then reads DCGM.
    dcgm_port: int = 0
    dcgm_prometheus: str | None = None
    # A Prometheus holding the exporter's own series of past months (report.prometheus).
    history_prometheus: str | None = None
    # The demo's own entry point trues a closed month up to its invoices; the tests' closed
    # months stay the ledger's, so their figures are the hand-worked ones.
    true_up: bool = False

    def start(self) -> DemoStack:
        """Start every fake on a free loopback port."""
        self.opencost = FakeOpenCost(self.cluster, self.clock)
        self.servers["opencost"] = FakeServer(self.opencost.handle).start()
        dcgm = fake_dcgm.make_handler(self.cluster, self.clock)
        self.servers["dcgm"] = FakeServer(dcgm, port=self.dcgm_port).start()
        self.servers["kueue"] = FakeServer(
            fake_kube.make_handler(self.cluster, self.clock, token=KUBE_TOKEN)
        ).start()
        self.servers["litellm"] = FakeServer(
            fake_litellm.make_handler(self.cluster, self.clock, api_key=LITELLM_KEY)
        ).start()
        self.servers["vllm"] = FakeServer(fake_vllm.make_handler(self.cluster, self.clock)).start()
        self.servers["openai_costs"] = FakeServer(
            fake_openai_costs.make_handler(self.cluster, self.clock, admin_key=OPENAI_ADMIN_KEY)
        ).start()
        self.servers["anthropic_costs"] = FakeServer(
            fake_anthropic_costs.make_handler(self.clock, admin_key=ANTHROPIC_ADMIN_KEY)
        ).start()
        self.servers["kueue_metrics"] = FakeServer(
            fake_kueue_metrics.make_handler(self.cluster, self.clock)
        ).start()
        # The key travels as a file, as it would in a cluster: never inline in the config.
        self.secrets = Path(tempfile.mkdtemp(prefix="chargeback-demo-"))
        (self.secrets / "litellm-key").write_text(LITELLM_KEY + "\n", encoding="utf-8")
        (self.secrets / "kube-token").write_text(KUBE_TOKEN + "\n", encoding="utf-8")
        (self.secrets / "openai-admin-key").write_text(OPENAI_ADMIN_KEY + "\n", encoding="utf-8")
        (self.secrets / "anthropic-admin-key").write_text(
            ANTHROPIC_ADMIN_KEY + "\n", encoding="utf-8"
        )
        self._write_export()
        return self

    def _write_export(self) -> None:
        """The cloud's export, landed an hour ago (its files settled long since)."""
        folder = self.secrets / FOCUS_FOLDER
        folder.mkdir()
        landed = time.time() - 3600
        for path in write_export(folder, self.cluster, "EUR", self.clock()):
            os.utime(path, (landed, landed))

    @property
    def urls(self) -> dict[str, str]:
        """Base URL of each fake by source name."""
        return {name: server.url for name, server in self.servers.items()}

    def config(self) -> Config:
        """A validated config for this stack."""
        return Config.model_validate(self._config_dict())

    def write_config(self) -> Path:
        """Write this stack's config as YAML beside its secrets, as a user's file would be."""
        path = self.secrets / "config.yaml"
        text = yaml.safe_dump(self._config_dict(), sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    def _config_dict(self) -> dict[str, Any]:
        return demo_config_dict(
            self.urls,
            str(self.secrets),
            self.dcgm_prometheus,
            self.history_prometheus,
            bills=True,
            true_up=self.true_up,
        )

    def stop(self) -> None:
        """Stop every fake."""
        for server in self.servers.values():
            server.stop()
        shutil.rmtree(self.secrets, ignore_errors=True)
