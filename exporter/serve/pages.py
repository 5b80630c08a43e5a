"""Pages published beside the metrics: rendered from a join in the worker, served as bytes.

The server knows a page by its path, its headers and a line for the landing page; what it
shows comes from whoever composes the exporter (the command line hands it the statement).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from exporter.config.schema import Config
from exporter.ledger.result import Chargeback

__all__ = ["Artefact", "Page"]

# Rendered from the last chargeback after a join; b"" while there is nothing to show.
Artefact = Callable[[Config, Chargeback], bytes]


@dataclass(frozen=True)
class Page:
    """One published page: the worker renders it under `name`, the server serves it at `path`."""

    name: str
    path: str
    description: str  # the landing page's words for it
    render: Artefact
    content_type: str = "text/html; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)
