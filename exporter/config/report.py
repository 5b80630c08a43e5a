"""The `report:` section: where a closed month's history is kept, and how statements name things."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

import babel
from pydantic import AfterValidator, Field, field_validator, model_validator

from exporter.config.types import StrictModel, Timeout, Url

__all__ = ["FocusName", "ReportConfig", "ReportPrometheus", "shortened"]


def shortened(value: str, limit: int = 60) -> str:
    """A value from the file, quoted and cut short enough for one error line."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


def _focus_name(value: str) -> str:
    # FOCUS StringHandling, as the FinOps Foundation's validator checks it: ASCII only.
    if not value.strip() or len(value) > 100 or not all(" " <= c <= "~" for c in value):
        raise ValueError("expected 1 to 100 printable ASCII characters (a FOCUS name)")
    return value


# FOCUS names: provider, publisher, invoice issuer.
FocusName = Annotated[str, AfterValidator(_focus_name)]


class ReportPrometheus(StrictModel):
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


def _cluster_name(value: str) -> str:
    # It goes into ids (InvoiceId, ResourceId): no space, no separator of ours, ASCII.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", value):
        raise ValueError(
            "expected 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return value


class ReportConfig(StrictModel):
    """What `report` reads beyond the sources (a closed month's quota history), and how its
    statements name things: the cluster, who provides and invoices, the numbers' locale."""

    prometheus: ReportPrometheus | None = None
    # Names the cluster in every FOCUS row and id and on the statement; OpenCost's default id.
    cluster: Annotated[str, AfterValidator(_cluster_name)] = "default-cluster"
    # An internal platform is provider, publisher and invoice issuer of what it runs (FOCUS
    # 1.2 appendix "Origination of cost data", scenario 5.1).
    provider: FocusName = "Internal GPU platform"
    invoice_issuer: FocusName | None = None  # default: the provider
    locale: str | None = None  # a BCP 47 tag like es-ES; default from timezone and currency

    @field_validator("locale")
    @classmethod
    def _known_locale(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                babel.Locale.parse(value, sep="-")
            except (ValueError, TypeError, babel.UnknownLocaleError) as exc:
                raise ValueError(
                    f"unknown locale {shortened(value)}: give a tag like es-ES or en-US"
                ) from exc
        return value
