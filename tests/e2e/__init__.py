"""End-to-end tests: the demo with Prometheus, Alertmanager and a headless browser."""
