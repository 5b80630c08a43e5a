"""Unit tests of exporter.sources.litellm over httpx.MockTransport."""
