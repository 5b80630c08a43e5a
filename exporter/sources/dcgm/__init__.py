"""DCGM: dcgm-exporter's GPUs read from URLs, discovered endpoints or Prometheus."""
