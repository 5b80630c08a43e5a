"""Unit tests of exporter.sources.dcgm over httpx.MockTransport."""
