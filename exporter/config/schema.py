"""Configuration: the YAML schema, validated once into a frozen object."""

from __future__ import annotations

import zoneinfo
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from exporter.config.advice import AdviceConfig
from exporter.config.attribution import AttributionConfig
from exporter.config.bills import BillsConfig
from exporter.config.dimensions import (
    DimensionConfig,
    SharedCostsConfig,
    unique_dimensions,
    weight_issues,
)
from exporter.config.loader import (
    KeyedErrors,
    issues_from_validation,
    load_yaml_with_lines,
    read_config_text,
)
from exporter.config.report import FocusName, ReportConfig, ReportPrometheus, shortened
from exporter.config.sources import (
    DcgmConfig,
    DcgmDiscovery,
    DcgmPrometheus,
    KueueConfig,
    KueueMetricsConfig,
    LiteLLMConfig,
    OpenCostConfig,
    SourceConfig,
    SourcesConfig,
    VllmConfig,
)
from exporter.config.types import (
    GpuHourPrice,
    IdlePolicy,
    Price,
    StrictModel,
    format_duration,
    parse_duration,
)
from exporter.config.unit_economics import Alternative, PriceBuild, build_key_issues
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
    "KueueMetricsConfig",
    "LiteLLMConfig",
    "ModelDecl",
    "OpenCostConfig",
    "ReportPrometheus",
    "SourceConfig",
    "SourcesConfig",
    "TeamConfig",
    "VllmConfig",
    "format_duration",
    "load_config",
    "parse_duration",
    "setting_error",
]

RESERVED_TEAMS = frozenset({"__idle__", "__unallocated__", "__other__", "__shared__"})


class BudgetConfig(StrictModel):
    """Monthly budgets of a team, in the configured currency."""

    gpu: Price | None = None
    llm: Price | None = None


class TeamConfig(StrictModel):
    """A declared team and the identities that map to it."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    namespaces: tuple[str, ...] = ()
    cluster_queues: tuple[str, ...] = ()
    litellm_teams: tuple[str, ...] = ()
    label_values: tuple[str, ...] = ()
    budget: BudgetConfig = BudgetConfig()


class SelfHosted(StrictModel):
    """Where a self-hosted model is served, so its hardware cost can follow its tokens.

    `weight: measured` weighs its completion tokens by the weight measured from vLLM's prefill
    and decode time (sources.vllm), falling back to `llm_completion_weight`; `served_model` is
    the name vLLM reports it under (its `model_name`), by default the declaration's `model`.
    """

    namespace: str
    weight: Literal["configured", "measured"] = "configured"
    served_model: Annotated[str, Field(min_length=1)] | None = None


class ModelDecl(StrictModel):
    """An LLM model as LiteLLM names it: external (a provider bills it) or self-hosted.

    `publisher` is who makes the model (`OpenAI` for gpt-4o): the FOCUS export's PublisherName
    on its rows (FOCUS 1.2 appendix "Origination of cost data").
    """

    model: str
    external: bool = False
    self_hosted: SelfHosted | None = None
    publisher: FocusName | None = None
    alternative: Alternative | None = None  # build or buy: what its tokens would cost bought

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> ModelDecl:
        if self.external == (self.self_hosted is not None):
            raise ValueError("declare the model either external: true or self_hosted: {namespace}")
        if self.alternative is not None and self.self_hosted is None:
            raise ValueError("an alternative compares a self-hosted model: set self_hosted")
        return self


class Config(StrictModel):
    """The whole configuration, frozen after validation."""

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "EUR"
    timezone: str = "UTC"
    idle_policy: IdlePolicy = IdlePolicy.PROPORTIONAL
    idle_by_node: bool = False
    # GPU-hour prices by GPU model (DCGM modelName) and by Kueue ResourceFlavor.
    gpu_prices: dict[str, GpuHourPrice] = Field(default_factory=dict)
    gpu_flavor_prices: dict[str, GpuHourPrice] = Field(default_factory=dict)
    llm_completion_weight: Annotated[float, Field(gt=0)] = 1.0
    # Unit economics (exporter.config.unit_economics): prices built from their parts.
    gpu_price_build: dict[str, PriceBuild] = Field(default_factory=dict)  # by GPU model
    gpu_flavor_price_build: dict[str, PriceBuild] = Field(default_factory=dict)  # by flavor
    grid_co2e_grams_per_kwh: Annotated[float, Field(ge=0, le=5_000)] | None = None
    teams: tuple[TeamConfig, ...] = ()
    attribution: AttributionConfig = AttributionConfig()
    sources: SourcesConfig = SourcesConfig()
    llm_models: tuple[ModelDecl, ...] = ()
    report: ReportConfig = ReportConfig()
    dimensions: tuple[DimensionConfig, ...] = ()  # allocation keys beyond the team
    shared_costs: SharedCostsConfig | None = None
    bills: BillsConfig = BillsConfig()  # invoices to reconcile with (exporter.config.bills)
    advice: AdviceConfig | None = None  # right-sizing advice (exporter.config.advice)

    @field_validator("dimensions")
    @classmethod
    def _unique_dimensions(cls, value: tuple[DimensionConfig, ...]) -> tuple[DimensionConfig, ...]:
        return unique_dimensions(value)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise ValueError(f"unknown time zone {shortened(value)}") from exc
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
                message = f"model {shortened(decl.model)} is already declared at llm_models[{seen}]"
                entries.append((("llm_models", index, "model"), message, ("llm_models", seen)))
        if entries:
            raise KeyedErrors(entries)
        return self

    @model_validator(mode="after")
    def _weights_name_teams(self) -> Config:
        # A name no team declares would be a phantom row taking money nobody is charged for.
        if self.shared_costs is not None:
            declared = [t.name for t in self.teams]
            entries = weight_issues(self.shared_costs, declared, RESERVED_TEAMS)
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
    def _measured_needs_vllm(self) -> Config:
        if self.sources.vllm is not None:
            return self
        entries: list[tuple[tuple[str | int, ...], str, tuple[str | int, ...] | None]] = [
            (("llm_models", i, "self_hosted", "weight"), "measured needs sources.vllm", None)
            for i, m in enumerate(self.llm_models)
            if m.self_hosted is not None and m.self_hosted.weight == "measured"
        ]
        if entries:
            raise KeyedErrors(entries)
        return self

    @model_validator(mode="after")
    def _price_keys(self) -> Config:
        entries = price_key_issues(self.gpu_prices, self.gpu_flavor_prices)
        entries += build_key_issues(self.gpu_price_build, self.gpu_flavor_price_build)
        if entries:
            raise KeyedErrors(entries)
        return self

    @model_validator(mode="after")
    def _advice_needs_dcgm_history(self) -> Config:
        dcgm = self.sources.dcgm
        if self.advice is not None and (dcgm is None or dcgm.prometheus is None):
            message = "reads DCGM history, so it needs sources.dcgm.prometheus"
            raise KeyedErrors([(("advice",), message, None)])
        return self

    @model_validator(mode="after")
    def _reservation_needs_quota(self) -> Config:
        if self.idle_policy.needs_kueue and self.sources.kueue is None:
            raise ValueError(
                f"idle_policy: {self.idle_policy} charges Kueue nominal quota,"
                " so it needs sources.kueue"
            )
        return self

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        """The time zone whose calendar months bound the month-to-date totals."""
        return zoneinfo.ZoneInfo(self.timezone)


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
                    f"{what} {shortened(value)} is already claimed by team "
                    f"{teams[owner[0]].name!r} at teams[{owner[0]}].{field}[{owner[1]}]"
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


def setting_error(
    path: str, where: tuple[str, ...], settings: BaseModel, message: str
) -> ConfigError:
    """A ConfigError for a setting under `where` whose value proved unusable (a secret file that
    cannot be read), naming the key whose value `message` quotes, with its line in the file."""
    found = _quoted_key(settings, message)
    key = (*where, *found) if found else where
    try:
        _, lines = load_yaml_with_lines(path, read_config_text(path))
    except ConfigError:  # changed since it was loaded: the message still names the value
        lines = {}
    line = next((lines[key[:n]] for n in range(len(key), 0, -1) if key[:n] in lines), None)
    return ConfigError(path, [ConfigIssue(line, ".".join(key), message)])


def _quoted_key(settings: BaseModel, message: str) -> tuple[str, ...]:
    """The key of the longest string setting whose value appears in `message`, or ()."""
    quoted = [(len(value), key) for key, value in _strings(settings) if value in message]
    return max(quoted)[1] if quoted else ()


def _strings(
    settings: BaseModel, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            yield from _strings(value, (*prefix, name))
        elif isinstance(value, str) and value:
            yield (*prefix, name), value
