"""Kueue's own metrics, read from the Prometheus that scrapes Kueue."""
