"""The month-end forecast: a blended run rate and an interval from the days' spread (pure)."""

from __future__ import annotations

from exporter.ledger.forecast.daybook import DayBook, Key, MonthDays
from exporter.ledger.forecast.figures import GPU_KIND, LLM_KIND, MonthForecast
from exporter.ledger.forecast.method import Bounds, Prior, Span, forecast

__all__ = [
    "GPU_KIND",
    "LLM_KIND",
    "Bounds",
    "DayBook",
    "Key",
    "MonthDays",
    "MonthForecast",
    "Prior",
    "Span",
    "forecast",
]
