"""The monitoring mixin: recording rules, alerts and Grafana dashboards generated from code."""

from __future__ import annotations

from chargeback_mixin.config import DEFAULT, MixinConfig, load_config

__all__ = ["DEFAULT", "MixinConfig", "load_config"]
