"""A light HTTP/1.1 GET client for many small bodies, on the shared boundary's semantics."""

from __future__ import annotations

from exporter.sources.http_light.client import LightClient, LightSettings, Target, light_target

__all__ = ["LightClient", "LightSettings", "Target", "light_target"]
