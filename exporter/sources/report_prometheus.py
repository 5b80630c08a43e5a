"""The client of `report.prometheus`, the Prometheus that keeps the exporter's own series."""

from __future__ import annotations

import os

import httpx

from exporter.config.schema import ReportPrometheus
from exporter.credentials import read_secret
from exporter.errors import UpstreamPayloadError
from exporter.sources.clients import make_client

__all__ = ["SOURCE", "open_client", "require_one_cluster"]

SOURCE = "report.prometheus"


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


def require_one_cluster(
    samples: list[tuple[dict[str, str], float]], what: str, *, selected: bool
) -> None:
    """Refuse `what` series of several clusters unless the config selected one: summed, they
    would bill one cluster's report on another's figures."""
    clusters = {labels.get("cluster", "") for labels, _ in samples}
    if len(clusters) > 1 and not selected:
        raise UpstreamPayloadError(
            f"{SOURCE}: {what} series of several clusters ({', '.join(sorted(clusters))}): set "
            "report.prometheus.cluster to the one this report is for"
        )
