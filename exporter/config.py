"""Configuration: the YAML schema, validated once into a frozen object."""

from __future__ import annotations

import os
import re
import zoneinfo
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from exporter.config_yaml import issues_from_validation, load_yaml_with_lines
from exporter.errors import ConfigError, ConfigIssue

__all__ = [
    "AttributionConfig",
    "Config",
    "DcgmConfig",
    "IdlePolicy",
    "KueueConfig",
    "LiteLLMConfig",
    "ModelDecl",
    "OpenCostConfig",
    "SourceConfig",
    "SourcesConfig",
    "TeamConfig",
    "load_config",
    "parse_duration",
    "read_secret",
]

RESERVED_TEAMS = frozenset({"__idle__", "__unallocated__", "__other__"})
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: object) -> timedelta:
    """Parse a Prometheus-style duration ("30s", "5m", "1h") or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value.strip())):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")
    if seconds <= 0:
        raise ValueError("a duration must be positive")
    return timedelta(seconds=seconds)


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
Url = Annotated[str, Field(pattern=r"^https?://[^\s]+$")]
Price = Annotated[float, Field(ge=0)]


class IdlePolicy(StrEnum):
    """Who pays for capacity nobody used (README "Who pays for idle")."""

    SEPARATE = "separate"
    PROPORTIONAL = "proportional"
    RESERVATION = "reservation"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceConfig(_Model):
    """What every source shares: its refresh schedule, deadlines, staleness limit and TLS trust.

    `timeout` bounds one call (connect, headers and body together); `refresh_timeout` bounds a
    whole refresh (every page and retry), by default three calls' worth but within `interval`.
    """

    interval: Duration = timedelta(minutes=1)
    timeout: Duration = timedelta(seconds=30)
    refresh_timeout: Duration | None = None
    max_staleness: Duration = timedelta(minutes=15)
    ca_file: str | None = None

    @model_validator(mode="after")
    def _refresh_fits_a_call(self) -> SourceConfig:
        if self.refresh_timeout is not None and self.refresh_timeout < self.timeout:
            raise ValueError("refresh_timeout must be at least timeout, which bounds one call")
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
    interval: Duration = timedelta(minutes=5)
    max_staleness: Duration = timedelta(minutes=30)
    rate_window: Duration = timedelta(hours=1)


class DcgmConfig(SourceConfig):
    """The dcgm-exporter endpoints to scrape."""

    urls: Annotated[tuple[Url, ...], Field(min_length=1)]
    interval: Duration = timedelta(seconds=30)
    idle_threshold: Annotated[float, Field(ge=0, le=1)] = 0.05


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
    interval: Duration = timedelta(minutes=5)
    page_size: Annotated[int, Field(ge=1, le=100)] = 100
    daily_page_size: Annotated[int, Field(ge=1)] = 1000

    @model_validator(mode="after")
    def _one_key(self) -> LiteLLMConfig:
        if (self.api_key_env is None) == (self.api_key_file is None):
            raise ValueError("set exactly one of api_key_env or api_key_file")
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
    max_teams: Annotated[int, Field(ge=1)] = 100


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


class Config(_Model):
    """The whole configuration, frozen after validation."""

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "EUR"
    timezone: str = "UTC"
    idle_policy: IdlePolicy = IdlePolicy.PROPORTIONAL
    idle_by_node: bool = False
    gpu_prices: dict[str, Price] = Field(default_factory=dict)
    llm_completion_weight: Annotated[float, Field(gt=0)] = 1.0
    teams: tuple[TeamConfig, ...] = ()
    attribution: AttributionConfig = AttributionConfig()
    sources: SourcesConfig = SourcesConfig()
    llm_models: tuple[ModelDecl, ...] = ()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: tuple[TeamConfig, ...]) -> tuple[TeamConfig, ...]:
        names = [t.name for t in teams]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"team names must be unique, repeated: {', '.join(dupes)}")
        reserved = sorted(set(names) & RESERVED_TEAMS)
        if reserved:
            raise ValueError(f"reserved team names: {', '.join(reserved)}")
        return teams

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


def read_secret(env: str | None, file: str | None) -> SecretStr:
    """Read a secret from an environment variable or a file; the value is never logged."""
    if env is not None:
        value = os.environ.get(env)
        if not value:
            raise ValueError(f"environment variable {env} is not set")
        return SecretStr(value.strip())
    if file is not None:
        try:
            return SecretStr(Path(file).read_text(encoding="utf-8").strip())
        except OSError as exc:
            raise ValueError(f"cannot read secret file {file}: {exc.strerror}") from exc
    raise ValueError("no secret configured")


def load_config(path: str) -> Config:
    """Read, parse and validate a config file, or raise ConfigError naming file, line and key."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, [ConfigIssue(None, "", f"cannot read: {exc.strerror}")]) from exc
    data, lines = load_yaml_with_lines(path, text)
    return validate_config(path, data, lines)


def validate_config(path: str, data: Any, lines: dict[tuple[str | int, ...], int]) -> Config:
    """Validate parsed YAML into a Config; `lines` maps key paths to their line numbers."""
    if data is None:
        data = {}
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(path, issues_from_validation(exc, lines)) from None
