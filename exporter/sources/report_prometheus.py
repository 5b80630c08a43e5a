"""The client of `report.prometheus`, the Prometheus that keeps the exporter's own series."""

from __future__ import annotations

import os

import httpx

from exporter.config.schema import ReportPrometheus
from exporter.credentials import read_secret
from exporter.sources.clients import make_client

__all__ = ["open_client"]


def open_client(cfg: ReportPrometheus, config_path: str) -> httpx.Client:
    """The client for the report's Prometheus; ValueError when its token or CA is unusable."""
    headers = {}
    if cfg.bearer_token_file is not None or cfg.bearer_token_env is not None:
        file = cfg.bearer_token_file
        if file is not None and not os.path.isabs(file):
            file = os.path.join(os.path.dirname(config_path), file)
        token = read_secret(cfg.bearer_token_env, file).get_secret_value()
        headers["Authorization"] = f"Bearer {token}"
    return make_client(cfg.url.rstrip("/"), cfg.timeout, headers=headers, ca_file=cfg.ca_file)
