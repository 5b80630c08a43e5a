"""vLLM source: per served model, the time its finished requests spent in prefill and in decode.

Upstream: the Prometheus that scrapes vLLM's `/metrics` (`sources.vllm.url`), through its
HTTP query API (see query.py). The span is the month read, up to the reading's end (a closed
month: the whole month in its zone), or the last `window` when set. A model whose totals are
incomplete or corrupt is dropped and counted; the ledger then falls back to the configured
weight for it and says so (exporter/ledger/llm/weights.py). No model at all is a valid answer:
nothing was served.
"""

from __future__ import annotations

import math
from datetime import timedelta

import httpx

from exporter.config.schema import VllmConfig
from exporter.sources.checks import Tally
from exporter.sources.clients import make_client
from exporter.sources.kind import SourceKind, nothing_shared
from exporter.sources.reading import Reading
from exporter.sources.vllm.query import read_totals, totals_by_model
from exporter.sources.vllm.records import ModelTiming, VllmSnapshot

__all__ = ["KIND", "ModelTiming", "VllmSnapshot", "build_client", "fetch"]

SOURCE = "vllm"


def build_client(cfg: VllmConfig, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client for the Prometheus that scrapes vLLM."""
    return make_client(cfg.url.rstrip("/"), cfg.timeout, ca_file=cfg.ca_file, transport=transport)


def span(cfg: VllmConfig, reading: Reading) -> timedelta:
    """The span read, ending at `reading.until`: the last `window`, else the month up to there
    (a second at least, as PromQL needs a positive range).

    Prometheus keeps history, so a closed month is read to its end in its own zone, not to the
    instant sources without history answer for (`reading.at`, cut at the UTC month's end).
    """
    if cfg.window is not None:
        return cfg.window
    seconds = reading.until.timestamp() - reading.month.start.timestamp()
    return timedelta(seconds=max(1, math.ceil(seconds)))


def fetch(client: httpx.Client, cfg: VllmConfig, shared: None, reading: Reading) -> VllmSnapshot:
    """Every served model's prefill and decode time and tokens over the span."""
    del shared
    over = span(cfg, reading)
    vectors = read_totals(client, over, reading.until, cfg.model_label)
    tally = Tally()
    totals = totals_by_model(vectors, cfg.model_label, tally)
    models = tuple(ModelTiming(model, **measures) for model, measures in totals.items())
    return VllmSnapshot(models, over.total_seconds(), tally.frozen())


KIND = SourceKind(
    SOURCE, VllmSnapshot, lambda config: config.sources.vllm, nothing_shared, build_client, fetch
)
