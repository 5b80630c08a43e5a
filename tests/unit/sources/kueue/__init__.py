"""Unit tests of exporter.sources.kueue over httpx.MockTransport."""
