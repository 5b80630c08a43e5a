"""What a what-if changes, as typed settings, and the error that refuses one (pure data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from exporter.config.schema import IdlePolicy

__all__ = ["WhatIf", "WhatIfError"]


class WhatIfError(ValueError):
    """A `--what-if` setting that cannot be applied; the message names its key."""


@dataclass(frozen=True)
class WhatIf:
    """The settings a what-if changes, each checked, by the names the config and month use."""

    given: tuple[str, ...]  # the settings as typed, in order
    idle_policy: IdlePolicy | None = None
    gpu_prices: Mapping[str, float] = field(default_factory=dict)  # by the config's spelling
    gpu_flavor_prices: Mapping[str, float] = field(default_factory=dict)
    quotas: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (queue, flavor)
    tokens_per_second: Mapping[str, float] = field(default_factory=dict)  # by model
