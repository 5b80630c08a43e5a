"""gpu-chargeback-exporter: per-team GPU and LLM chargeback metrics for Prometheus."""

from __future__ import annotations

__version__ = "0.1.0"
