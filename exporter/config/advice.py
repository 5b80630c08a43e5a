"""Config of the right-sizing advice: its history window, refresh, and how sure advice must be."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from exporter.config.loader import KeyedErrors
from exporter.config.sources import SourceConfig
from exporter.config.types import Interval, Staleness, within

__all__ = ["AdviceConfig"]

Share = Annotated[float, Field(gt=0, le=1)]


class AdviceConfig(SourceConfig):
    """Right-sizing advice from DCGM history in `sources.dcgm.prometheus` (and quota history
    in `report.prometheus`), refreshed on its own slow schedule (docs/advice.md).

    `headroom` is the share of a profile or quota the peak may fill; `idle_share` the share
    of the window below the idle threshold that makes a GPU idle; `quota_share` the peak
    use over nominal quota below which a queue is advised to give GPUs back.
    """

    interval: Interval = timedelta(hours=1)
    max_staleness: Staleness = timedelta(hours=3)
    window: Annotated[timedelta, BeforeValidator(within("1h", "31d"))] = timedelta(days=7)
    step: Annotated[timedelta, BeforeValidator(within("30s", "1h"))] = timedelta(minutes=5)
    min_coverage: Annotated[timedelta, BeforeValidator(within("5m", "31d"))] = timedelta(days=1)
    top_n: Annotated[int, Field(ge=1, le=100)] = 5
    headroom: Share = 0.8
    idle_share: Share = 0.8
    quota_share: Share = 0.5

    @model_validator(mode="after")
    def _coverage_within_window(self) -> AdviceConfig:
        if self.min_coverage > self.window:
            message = "must not be longer than window: no workload could ever be advised"
            raise KeyedErrors([(("min_coverage",), message, None)])
        if self.step * 2 > self.window:
            message = "must be at most half the window: percentiles need samples"
            raise KeyedErrors([(("step",), message, None)])
        return self
