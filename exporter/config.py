"""Configuration: the YAML schema, validated once into a frozen object."""

from __future__ import annotations

import math
import re
import zoneinfo
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from exporter.config_yaml import (
    KeyedErrors,
    issues_from_validation,
    load_yaml_with_lines,
    read_config_text,
)
from exporter.errors import ConfigError, ConfigIssue
from exporter.gpu_names import price_key_issues

__all__ = [
    "AttributionConfig",
    "Config",
    "DcgmConfig",
    "DcgmDiscovery",
    "DcgmPrometheus",
    "IdlePolicy",
    "KueueConfig",
    "LiteLLMConfig",
    "ModelDecl",
    "OpenCostConfig",
    "SourceConfig",
    "SourcesConfig",
    "TeamConfig",
    "format_duration",
    "load_config",
    "parse_duration",
]

RESERVED_TEAMS = frozenset({"__idle__", "__unallocated__", "__other__"})
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Far beyond any bound below, and well inside what timedelta can hold.
_LONGEST = 366 * 86400.0


def parse_duration(value: object) -> timedelta:
    """Parse a Prometheus-style duration ("30s", "5m", "1h") or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    duration = timedelta(seconds=_seconds(value))
    if not duration:
        raise ValueError("a duration must be at least a microsecond")
    return duration


def _seconds(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value.strip())):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")
    if not math.isfinite(seconds):
        raise ValueError("a duration must be a finite number")
    if seconds <= 0:
        raise ValueError("a duration must be positive")
    if seconds > _LONGEST:
        raise ValueError("a duration must be at most a year")
    return seconds


def format_duration(value: timedelta) -> str:
    """The shortest exact Prometheus-style spelling of a duration ("90s", "1h", "250ms")."""
    seconds = value.total_seconds()
    ms = round(seconds * 1000)
    if ms == 0 or abs(seconds * 1000 - ms) > 1e-6:
        return f"{seconds:g}s"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _within(low: str, high: str) -> Callable[[object], timedelta]:
    """A duration parser that also refuses values outside [low, high]."""
    lowest, highest = _seconds(low), _seconds(high)

    def parse(value: object) -> timedelta:
        if isinstance(value, timedelta):
            value = value.total_seconds()
        seconds = _seconds(value)
        # Echo what the file says: 0.0001ms is below timedelta's microsecond resolution.
        shown = value.strip() if isinstance(value, str) else f"{seconds:g}s"
        if seconds < lowest:
            raise ValueError(f"must be at least {low}, got {shown}")
        if seconds > highest:
            raise ValueError(f"must be at most {high}, got {shown}")
        return timedelta(seconds=seconds)

    return parse


Interval = Annotated[timedelta, BeforeValidator(_within("1s", "1d"))]
Timeout = Annotated[timedelta, BeforeValidator(_within("100ms", "5m"))]
Staleness = Annotated[timedelta, BeforeValidator(_within("1s", "7d"))]
RateWindow = Annotated[timedelta, BeforeValidator(_within("1m", "7d"))]
Url = Annotated[str, Field(pattern=r"^https?://[^\s]+$")]
Price = Annotated[float, Field(ge=0)]


class IdlePolicy(StrEnum):
    """Who pays for capacity nobody used (README "Who pays for idle")."""

    SEPARATE = "separate"
    PROPORTIONAL = "proportional"
    RESERVATION = "reservation"


class _Model(BaseModel):
    # allow_inf_nan: `.inf` and `.nan` are YAML floats, and no setting means either.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SourceConfig(_Model):
    """What every source shares: its refresh schedule, deadlines, staleness limit and TLS trust.

    `timeout` bounds one call (connect, headers and body together); `refresh_timeout` bounds a
    whole refresh (every page and retry), by default three calls' worth but within `interval`.
    """

    interval: Interval = timedelta(minutes=1)
    timeout: Timeout = timedelta(seconds=30)
    refresh_timeout: Interval | None = None
    max_staleness: Staleness = timedelta(minutes=15)
    ca_file: str | None = None

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


class DcgmDiscovery(_Model):
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
    # Endpoints scraped at once: enough for a few hundred nodes within one call's timeout, few
    # enough that the exporter's threads and sockets stay bounded.
    concurrency: Annotated[int, Field(ge=1, le=256)] = 16
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


class DcgmPrometheus(_Model):
    """Read DCGM utilisation from a Prometheus that already scrapes dcgm-exporter."""

    url: Url
    # Defaults to sources.opencost.rate_window, so utilisation covers the same hours as cost.
    window: RateWindow | None = None
    # `exported`: the workload is in exported_pod/exported_namespace/exported_container, since
    # the scrape's own target labels (a ServiceMonitor's pod, namespace) took the plain names;
    # `plain`: the scrape keeps dcgm-exporter's labels (honor_labels, or no target labels).
    workload_labels: Literal["exported", "plain"] = "exported"
    # Step of the month-to-date idle subquery: one sample per GPU per step. 5m bounds a day's
    # query at 288 points per series (docs/sources-dcgm-kueue.md, "Idle GPU-hours").
    step: Annotated[timedelta, BeforeValidator(_within("15s", "1h"))] = timedelta(minutes=5)


class DcgmConfig(SourceConfig):
    """Where dcgm-exporter is read: listed urls, discovered endpoints, or through Prometheus."""

    urls: Annotated[tuple[Url, ...], Field(min_length=1)] | None = None
    interval: Interval = timedelta(seconds=30)
    idle_threshold: Annotated[float, Field(ge=0, le=1)] = 0.05
    discovery: DcgmDiscovery | None = None
    prometheus: DcgmPrometheus | None = None

    @model_validator(mode="after")
    def _one_way_to_read(self) -> DcgmConfig:
        ways = [self.urls is not None, self.discovery is not None, self.prometheus is not None]
        if sum(ways) != 1:
            raise ValueError("set exactly one of urls, discovery or prometheus")
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

    @model_validator(mode="after")
    def _one_way_in(self) -> KueueConfig:
        ways = [self.url is not None, self.kubeconfig is not None, self.in_cluster]
        if sum(ways) != 1:
            raise ValueError("set exactly one of url, kubeconfig or in_cluster: true")
        return self


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
    reconcile_interval: Annotated[timedelta, BeforeValidator(_within("1m", "7d"))] = timedelta(
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


class SourcesConfig(_Model):
    """Each source is optional; a missing one means its families are absent."""

    opencost: OpenCostConfig | None = None
    dcgm: DcgmConfig | None = None
    kueue: KueueConfig | None = None
    litellm: LiteLLMConfig | None = None


class BudgetConfig(_Model):
    """Monthly budgets of a team, in the configured currency."""

    gpu: Price | None = None
    llm: Price | None = None


class TeamConfig(_Model):
    """A declared team and the identities that map to it."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    namespaces: tuple[str, ...] = ()
    cluster_queues: tuple[str, ...] = ()
    litellm_teams: tuple[str, ...] = ()
    label_values: tuple[str, ...] = ()
    budget: BudgetConfig = BudgetConfig()


class AttributionConfig(_Model):
    """Which labels name a team, in precedence order."""

    team_label_keys: tuple[str, ...] = ("team",)
    namespace_label_keys: tuple[str, ...] = ("team",)
    fallback_label_keys: tuple[str, ...] = ()
    strict_teams: bool = False
    max_teams: Annotated[int, Field(ge=1, le=10_000)] = 100


class SelfHosted(_Model):
    """Where a self-hosted model is served, so its hardware cost can follow its tokens."""

    namespace: str


class ModelDecl(_Model):
    """An LLM model as LiteLLM names it: external (a provider bills it) or self-hosted."""

    model: str
    external: bool = False
    self_hosted: SelfHosted | None = None

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> ModelDecl:
        if self.external == (self.self_hosted is not None):
            raise ValueError("declare the model either external: true or self_hosted: {namespace}")
        return self


class ReportPrometheus(_Model):
    """The Prometheus that stores the exporter's own series, for a closed month's quota.

    `cluster` selects one cluster's series when a central Prometheus holds several (the
    `cluster` label); the bearer token is read from `bearer_token_file` or `bearer_token_env`.
    """

    url: Url
    cluster: Annotated[str, Field(min_length=1)] | None = None
    timeout: Timeout = timedelta(seconds=30)
    ca_file: str | None = None
    bearer_token_file: str | None = None
    bearer_token_env: str | None = None

    @model_validator(mode="after")
    def _one_token(self) -> ReportPrometheus:
        if self.bearer_token_file is not None and self.bearer_token_env is not None:
            raise ValueError("set at most one of bearer_token_file or bearer_token_env")
        return self


class ReportConfig(_Model):
    """What `report` reads beyond the sources: where a closed month's quota history is."""

    prometheus: ReportPrometheus | None = None


class Config(_Model):
    """The whole configuration, frozen after validation."""

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "EUR"
    timezone: str = "UTC"
    idle_policy: IdlePolicy = IdlePolicy.PROPORTIONAL
    idle_by_node: bool = False
    gpu_prices: dict[str, Price] = Field(default_factory=dict)  # by GPU model (DCGM modelName)
    gpu_flavor_prices: dict[str, Price] = Field(default_factory=dict)  # by Kueue ResourceFlavor
    llm_completion_weight: Annotated[float, Field(gt=0)] = 1.0
    teams: tuple[TeamConfig, ...] = ()
    attribution: AttributionConfig = AttributionConfig()
    sources: SourcesConfig = SourcesConfig()
    llm_models: tuple[ModelDecl, ...] = ()
    report: ReportConfig = ReportConfig()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise ValueError(f"unknown time zone {_short(value)}") from exc
        return value

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: tuple[TeamConfig, ...]) -> tuple[TeamConfig, ...]:
        names = [t.name for t in teams]
        dupes = sorted(n for n, count in Counter(names).items() if count > 1)
        if dupes:
            raise ValueError(f"team names must be unique, repeated: {', '.join(dupes)}")
        reserved = sorted(set(names) & RESERVED_TEAMS)
        if reserved:
            raise ValueError(f"reserved team names: {', '.join(reserved)}")
        return teams

    @model_validator(mode="after")
    def _one_owner_each(self) -> Config:
        # Attribution looks identities up in one map each: a second claim would silently win.
        entries = [
            *_claimed_twice(self.teams, "namespaces", "namespace"),
            *_claimed_twice(self.teams, "cluster_queues", "ClusterQueue"),
            *_claimed_twice(self.teams, "litellm_teams", "LiteLLM team"),
        ]
        first: dict[str, int] = {}
        for index, decl in enumerate(self.llm_models):
            seen = first.setdefault(decl.model, index)
            if seen != index:
                message = f"model {_short(decl.model)} is already declared at llm_models[{seen}]"
                entries.append((("llm_models", index, "model"), message, ("llm_models", seen)))
        if entries:
            raise KeyedErrors(entries)
        return self

    @model_validator(mode="after")
    def _llm_currency(self) -> Config:
        llm = self.sources.litellm
        if llm is None:
            return self
        converted = llm.rate is not None or llm.rate_file is not None
        key = ("sources", "litellm")
        if llm.currency != self.currency and not converted:
            message = (
                f"LiteLLM reports {llm.currency} but the exporter reports {self.currency}: "
                "set sources.litellm.rate or rate_file"
            )
            raise KeyedErrors([((*key, "currency"), message, ("currency",))])
        if llm.currency == self.currency and converted:
            # Refused, not ignored: a rate nobody applies is a mistake in one of the two keys.
            which = "rate" if llm.rate is not None else "rate_file"
            message = f"LiteLLM already reports {self.currency}, so a rate does not apply"
            raise KeyedErrors([((*key, which), message, (*key, "currency"))])
        return self

    @model_validator(mode="after")
    def _price_keys(self) -> Config:
        entries = price_key_issues(self.gpu_prices, self.gpu_flavor_prices)
        if entries:
            raise KeyedErrors(entries)
        return self

    @model_validator(mode="after")
    def _reservation_needs_quota(self) -> Config:
        if self.idle_policy is IdlePolicy.RESERVATION and self.sources.kueue is None:
            raise ValueError(
                "idle_policy: reservation charges Kueue nominal quota, so it needs sources.kueue"
            )
        return self

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        """The time zone whose calendar months bound the month-to-date totals."""
        return zoneinfo.ZoneInfo(self.timezone)


def _short(value: str, limit: int = 60) -> str:
    """A value from the file, quoted and cut short enough for one error line."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


def _claimed_twice(
    teams: tuple[TeamConfig, ...], field: str, what: str
) -> list[tuple[tuple[str | int, ...], str, tuple[str | int, ...] | None]]:
    owners: dict[str, tuple[int, int]] = {}
    entries: list[tuple[tuple[str | int, ...], str, tuple[str | int, ...] | None]] = []
    for t, team in enumerate(teams):
        for v, value in enumerate(getattr(team, field)):
            owner = owners.setdefault(value, (t, v))
            if owner[0] != t:
                other = ("teams", owner[0], field, owner[1])
                message = (
                    f"{what} {_short(value)} is already claimed by team {teams[owner[0]].name!r} "
                    f"at teams[{owner[0]}].{field}[{owner[1]}]"
                )
                entries.append((("teams", t, field, v), message, other))
    return entries


def load_config(path: str) -> Config:
    """Read, parse and validate a config file, or raise ConfigError naming file, line and key."""
    data, lines = load_yaml_with_lines(path, read_config_text(path))
    return validate_config(path, data, lines)


def validate_config(path: str, data: Any, lines: dict[tuple[str | int, ...], int]) -> Config:
    """Validate parsed YAML into a Config; `lines` maps key paths to their line numbers."""
    if data is None:
        # Most likely the wrong file, or a ConfigMap key that did not render: not "all defaults".
        message = "the file has no settings (it is empty or only comments)"
        raise ConfigError(path, [ConfigIssue(None, "", message)])
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(path, issues_from_validation(exc, lines)) from None
