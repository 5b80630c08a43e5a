"""Unit tests of exporter.sources.opencost over httpx.MockTransport."""
