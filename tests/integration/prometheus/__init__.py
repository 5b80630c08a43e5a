"""Integration tests against a real Prometheus and promtool, which keep the machine's time."""
