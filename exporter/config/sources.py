"""The `sources:` section of the config: one model per upstream, and the common source settings."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from exporter.config.loader import KeyedErrors
from exporter.config.types import (
    DEFAULT_MAX_RESPONSE_SIZE,
    ByteSize,
    Interval,
    RateWindow,
    Staleness,
    StrictModel,
    Timeout,
    Url,
    format_duration,
    within,
)

__all__ = [
    "DcgmConfig",
    "DcgmDiscovery",
    "DcgmPrometheus",
    "KueueConfig",
    "KueueMetricsConfig",
    "LiteLLMConfig",
    "OpenCostConfig",
    "SourceConfig",
    "SourcesConfig",
    "VllmConfig",
]


class SourceConfig(StrictModel):
    """What every source shares: its refresh schedule, deadlines, staleness, TLS trust, and the
    largest reply it reads.

    `timeout` bounds one call (connect, headers and body together); `refresh_timeout` bounds a
    whole refresh (every page and retry), by default three calls' worth but within `interval`.
    """

    interval: Interval = timedelta(minutes=1)
    timeout: Timeout = timedelta(seconds=30)
    refresh_timeout: Interval | None = None
    max_staleness: Staleness = timedelta(minutes=15)
    ca_file: str | None = None
    # The most one reply may hold after decompression; past it the read stops (too_large).
    max_response_size: ByteSize = DEFAULT_MAX_RESPONSE_SIZE

    @model_validator(mode="after")
    def _staleness_outlives_a_refresh(self) -> SourceConfig:
        # Data is dropped once older than max_staleness: if that came before the next refresh
        # (one interval plus up to one timeout later), good data would vanish every cycle.
        needed = self.interval + self.timeout
        if self.max_staleness < needed:
            given = "" if "max_staleness" in self.model_fields_set else " (the default)"
            message = (
                f"{format_duration(self.max_staleness)}{given} is shorter than interval + "
                f"timeout = {format_duration(needed)}; data would expire between refreshes"
            )
            raise KeyedErrors([(("max_staleness",), message, None)])
        return self

    @model_validator(mode="after")
    def _refresh_fits_a_call(self) -> SourceConfig:
        if self.refresh_timeout is not None and self.refresh_timeout < self.timeout:
            message = "must be at least timeout, which bounds one call"
            raise KeyedErrors([(("refresh_timeout",), message, None)])
        return self

    @property
    def refresh_deadline(self) -> timedelta:
        """How long one refresh may take, retries included."""
        if self.refresh_timeout is not None:
            return self.refresh_timeout
        return max(self.timeout, min(3 * self.timeout, self.interval))


class OpenCostConfig(SourceConfig):
    """Where OpenCost's API listens and how often to ask it."""

    url: Url
    interval: Interval = timedelta(minutes=5)
    max_staleness: Staleness = timedelta(minutes=30)
    rate_window: RateWindow = timedelta(hours=1)
    # Node assets price idle GPU nodes and carry the node labels flavors select on.
    node_assets: bool = True


# Endpoints scraped at once: enough for a few hundred nodes within one call's timeout, few
# enough that the exporter's threads and sockets stay bounded.
Concurrency = Annotated[int, Field(ge=1, le=256)]


class DcgmDiscovery(StrictModel):
    """Find dcgm-exporter's pods through the EndpointSlices of its Service.

    The defaults are the NVIDIA GPU operator's: Service `nvidia-dcgm-exporter`, port
    `gpu-metrics` (9400), installed in namespace `gpu-operator`. The API server is reached in
    cluster by default, or through `url` + `token_file` or a `kubeconfig`.
    """

    namespace: Annotated[str, Field(min_length=1)] = "gpu-operator"
    service: Annotated[str, Field(min_length=1)] = "nvidia-dcgm-exporter"
    port: Annotated[str, Field(min_length=1)] = "gpu-metrics"
    scheme: Literal["http", "https"] = "http"
    path: Annotated[str, Field(pattern=r"^/")] = "/metrics"
    concurrency: Concurrency = 16
    url: Url | None = None
    token_file: str | None = None
    kubeconfig: str | None = None
    ca_file: str | None = None  # the API server's CA, with `url`
    insecure_skip_tls_verify: bool = False
    page_size: Annotated[int, Field(ge=1, le=5000)] = 500

    @property
    def in_cluster(self) -> bool:
        """In cluster unless an API server url or a kubeconfig is given."""
        return self.url is None and self.kubeconfig is None

    @model_validator(mode="after")
    def _one_way_in(self) -> DcgmDiscovery:
        if self.url is not None and self.kubeconfig is not None:
            raise ValueError("set at most one of url or kubeconfig (neither means in cluster)")
        return self


class DcgmPrometheus(StrictModel):
    """Read DCGM utilisation from a Prometheus that already scrapes dcgm-exporter."""

    url: Url
    # Defaults to sources.opencost.rate_window, so utilisation covers the same hours as cost.
    window: RateWindow | None = None
    # `exported`: the workload is in exported_pod/exported_namespace/exported_container, since
    # the scrape's own target labels (a ServiceMonitor's pod, namespace) took the plain names;
    # `plain`: the scrape keeps dcgm-exporter's labels (honor_labels, or no target labels).
    workload_labels: Literal["exported", "plain"] = "exported"
    # Step of the month-to-date idle subquery: one sample per GPU per step. 5m bounds a day's
    # query at 288 points per series (docs/sources/dcgm.md, "Idle GPU-hours").
    step: Annotated[timedelta, BeforeValidator(within("15s", "1h"))] = timedelta(minutes=5)


class DcgmConfig(SourceConfig):
    """Where dcgm-exporter is read: listed urls, discovered endpoints, or through Prometheus."""

    urls: Annotated[tuple[Url, ...], Field(min_length=1)] | None = None
    concurrency: Concurrency = 16  # listed urls scraped at once (discovery has its own)
    interval: Interval = timedelta(seconds=30)
    idle_threshold: Annotated[float, Field(ge=0, le=1)] = 0.05
    discovery: DcgmDiscovery | None = None
    prometheus: DcgmPrometheus | None = None

    @model_validator(mode="after")
    def _one_way_to_read(self) -> DcgmConfig:
        ways = [self.urls is not None, self.discovery is not None, self.prometheus is not None]
        if sum(ways) != 1:
            raise ValueError("set exactly one of urls, discovery or prometheus")
        if "concurrency" in self.model_fields_set and self.urls is None:
            where = "set discovery.concurrency" if self.discovery is not None else "not used"
            message = f"applies to urls only ({where})"
            raise KeyedErrors([(("concurrency",), message, None)])
        return self


class KueueConfig(SourceConfig):
    """How to reach the Kubernetes API that serves Kueue's objects."""

    url: Url | None = None
    token_file: str | None = None
    kubeconfig: str | None = None
    in_cluster: bool = False
    insecure_skip_tls_verify: bool = False
    api_version: Literal["auto", "v1beta2", "v1beta1"] = "auto"
    page_size: Annotated[int, Field(ge=1, le=5000)] = 500
    # Workload objects for the queue figures (docs/queues.md): preempted work and waiting;
    # off by default, as they need list on workloads and localqueues (deploy/ grants it).
    workloads: bool = False
    # The only per-workload series: the N costliest preempted workloads of the month.
    top_preempted: Annotated[int, Field(ge=0, le=100)] = 10

    @model_validator(mode="after")
    def _one_way_in(self) -> KueueConfig:
        ways = [self.url is not None, self.kubeconfig is not None, self.in_cluster]
        if sum(ways) != 1:
            raise ValueError("set exactly one of url, kubeconfig or in_cluster: true")
        return self


class KueueMetricsConfig(SourceConfig):
    """A Prometheus that scrapes Kueue: waiting, evictions and fair-sharing shares.

    They give the queue figures' wait percentiles and weighted shares (docs/queues.md).
    """

    url: Url


class LiteLLMConfig(SourceConfig):
    """The LiteLLM proxy and the key to read it with (never inline)."""

    url: Url
    api_key_env: str | None = None
    api_key_file: str | None = None
    interval: Interval = timedelta(minutes=5)
    page_size: Annotated[int, Field(ge=1, le=100)] = 100
    # LiteLLM refuses more than 1000 rows a page (100 before 1.108; the client then pages).
    daily_page_size: Annotated[int, Field(ge=1, le=1000)] = 1000
    # The currency LiteLLM prices in (its model prices are per-token USD unless configured
    # otherwise), and how many units of the exporter's `currency` one unit of it is worth:
    # a fixed `rate`, or a `rate_file` holding one number that a finance job keeps current.
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    rate: Annotated[float, Field(gt=0, lt=1e6, allow_inf_nan=False)] | None = None
    rate_file: str | None = None
    # Days before yesterday do not change, so refreshes read only the last two days; a full
    # read of the month this often repairs anything that changed behind them anyway.
    reconcile_interval: Annotated[timedelta, BeforeValidator(within("1m", "7d"))] = timedelta(
        hours=1
    )

    @model_validator(mode="after")
    def _one_key(self) -> LiteLLMConfig:
        if (self.api_key_env is None) == (self.api_key_file is None):
            raise ValueError("set exactly one of api_key_env or api_key_file")
        return self

    @model_validator(mode="after")
    def _one_rate(self) -> LiteLLMConfig:
        if self.rate is not None and self.rate_file is not None:
            raise KeyedErrors([(("rate_file",), "set rate or rate_file, not both", ("rate",))])
        return self


class VllmConfig(SourceConfig):
    """A Prometheus that scrapes vLLM: its request prefill and decode time by model.

    They measure each self-hosted model's completion weight (docs/llm.md, "Measured
    prompt/completion weight"); `window` defaults to the month read, else the last `window`.
    """

    url: Url
    interval: Interval = timedelta(minutes=5)
    max_staleness: Staleness = timedelta(minutes=30)
    window: Annotated[timedelta, BeforeValidator(within("1h", "31d"))] | None = None
    # Fewer finished requests than this measure noise, not the model: the weight falls back.
    min_requests: Annotated[int, Field(ge=1, le=1_000_000_000)] = 100
    # Fewer prompt or completion tokens than this are a young or reset counter, not the model.
    min_tokens: Annotated[int, Field(ge=1, le=1_000_000_000_000)] = 1000
    # The plausible band of a measured weight (docs/llm.md, "Plausible weights"): outside it the
    # configured weight is applied. Below 1 a completion token would cost less than a prompt
    # token, which is the phases swapped, never the model.
    min_weight: Annotated[float, Field(ge=1, le=1e6, allow_inf_nan=False)] = 1.0
    max_weight: Annotated[float, Field(ge=1, le=1e6, allow_inf_nan=False)] = 500.0
    # vLLM names the served model in `model_name` (its --served-model-name).
    model_label: Annotated[str, Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")] = "model_name"

    @model_validator(mode="after")
    def _a_band(self) -> VllmConfig:
        if self.max_weight <= self.min_weight:
            message = f"must be above min_weight ({self.min_weight:g})"
            raise KeyedErrors([(("max_weight",), message, ("min_weight",))])
        return self


class SourcesConfig(StrictModel):
    """Each source is optional; a missing one means its families are absent."""

    opencost: OpenCostConfig | None = None
    dcgm: DcgmConfig | None = None
    kueue: KueueConfig | None = None
    litellm: LiteLLMConfig | None = None
    vllm: VllmConfig | None = None
    kueue_metrics: KueueMetricsConfig | None = None
