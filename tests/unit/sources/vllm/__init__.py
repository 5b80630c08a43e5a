"""Unit tests of exporter.sources.vllm over httpx.MockTransport."""
