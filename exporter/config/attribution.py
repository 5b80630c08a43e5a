"""Config of the team attribution: which label and annotation keys name a team, in order."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from exporter.config.types import StrictModel

__all__ = ["AnnotationKey", "AttributionConfig"]

# A Kubernetes annotation key (an optional DNS-subdomain prefix and "/", then a name), or the
# form a sanitiser made of one (OpenCost's `finops_io_team`): both canonicalise alike.
_ANNOTATION_KEY = re.compile(
    r"^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
# A prefix of 253 characters, "/" and a name of 63, written out whole or sanitised.
_LONGEST_KEY = 317


def _annotation_key(key: str) -> str:
    if len(key) > _LONGEST_KEY or not _ANNOTATION_KEY.fullmatch(key):
        shown = key if len(key) <= 60 else key[:57] + "..."
        raise ValueError(
            f"{shown!r} is not an annotation key: expected [prefix/]name, like finops.io/team"
        )
    return key


AnnotationKey = Annotated[str, AfterValidator(_annotation_key)]


class AttributionConfig(StrictModel):
    """Which labels and annotations name a team, in precedence order (ledger.attribution).

    The annotation keys are empty by default: a config that names none places every workload
    exactly as before, and the attribution then never looks at an annotation.
    """

    team_label_keys: tuple[str, ...] = ("team",)
    team_annotation_keys: tuple[AnnotationKey, ...] = ()
    namespace_label_keys: tuple[str, ...] = ("team",)
    namespace_annotation_keys: tuple[AnnotationKey, ...] = ()
    fallback_label_keys: tuple[str, ...] = ()
    strict_teams: bool = False
    max_teams: Annotated[int, Field(ge=1, le=10_000)] = 100
    # Models shown per team in the team x model series; the rest fold into `__other__`.
    max_models: Annotated[int, Field(ge=1, le=10_000)] = 10
