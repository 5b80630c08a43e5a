"""The `bills:` section: the invoices the ledger is reconciled with, and how a month trues up.

Each bill source is optional and named by its key; `type` says which upstream it reads. A bill
in another currency than the exporter's converts at `currency_rates` (units of the exporter's
currency per unit of the bill's), and a bill in a currency with no rate is refused where it is
read, so no figure is reconciled at a guessed rate.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from exporter.config.sources import SourceConfig
from exporter.config.types import Interval, Staleness, StrictModel, Url, within

__all__ = [
    "AnthropicCostsConfig",
    "BillSourceConfig",
    "BillsConfig",
    "FocusExportConfig",
    "OpenAICostsConfig",
]

Rate = Annotated[float, Field(gt=0, lt=1e6, allow_inf_nan=False)]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class _BillSource(SourceConfig):
    """What every bill source shares: the source settings, how often a bill is worth reading
    (bills change by the hour, not the minute), and whether a closed month trues up on it."""

    # Durations written as every source's are (30s, 15m, 6h).
    interval: Interval = timedelta(minutes=15)
    max_staleness: Staleness = timedelta(hours=6)
    # With true_up, a closed month's report spreads (billed - recorded) for this bill's scope
    # onto the teams in proportion to their recorded share of it (component `true_up`).
    true_up: bool = False


class FocusExportConfig(_BillSource):
    """A cloud provider's FOCUS cost export (AWS Data Exports, Azure, Google Cloud, OCI): CSV
    files, optionally gzip, in a folder the provider's export job writes to."""

    type: Literal["focus"]
    path: str  # a file or a folder, read recursively for *.csv and *.csv.gz
    # The rows that bill this cluster's nodes: by the resource ids OpenCost's nodes carry
    # (its providerID), or by a tag the provider's rows carry, `key=value`.
    cluster_tag: Annotated[str, Field(pattern=r"^[^=\s]+=[^\s]*$")] | None = None
    # A file modified within this long may still be being written: it is not read yet.
    settle: Annotated[timedelta, BeforeValidator(within("1s", "1d"))] = timedelta(minutes=2)


class _AdminApi(_BillSource):
    """An LLM provider's cost API, read with an admin key (never inline)."""

    url: Url
    admin_key_env: str | None = None
    admin_key_file: str | None = None
    # Which of the provider's projects or workspaces this gateway's traffic bills to; empty:
    # the whole organisation.
    scopes: tuple[str, ...] = ()
    # The provider name LiteLLM records for this provider's models (its `custom_llm_provider`).
    gateway_provider: str

    @model_validator(mode="after")
    def _one_key(self) -> _AdminApi:
        if (self.admin_key_env is None) == (self.admin_key_file is None):
            raise ValueError("set exactly one of admin_key_env or admin_key_file")
        return self


class OpenAICostsConfig(_AdminApi):
    """OpenAI's organization costs API (`GET /v1/organization/costs`)."""

    type: Literal["openai"]
    url: Url = "https://api.openai.com"
    gateway_provider: str = "openai"


class AnthropicCostsConfig(_AdminApi):
    """Anthropic's Admin API cost report (`GET /v1/organizations/cost_report`)."""

    type: Literal["anthropic"]
    url: Url = "https://api.anthropic.com"
    gateway_provider: str = "anthropic"


BillSourceConfig = Annotated[
    FocusExportConfig | OpenAICostsConfig | AnthropicCostsConfig, Field(discriminator="type")
]


class BillsConfig(StrictModel):
    """Every bill source by name, and the rates their currencies convert at."""

    sources: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")], BillSourceConfig] = (
        Field(default_factory=dict)
    )
    currency_rates: dict[Currency, Rate] = Field(default_factory=dict)
    # Drift below this share of the billed amount is rounding, not a finding (report only;
    # the alert's threshold is the mixin's knob).
    tolerance: Annotated[float, Field(ge=0, le=1)] = 0.01
