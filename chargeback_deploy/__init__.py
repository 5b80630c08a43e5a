"""Kubernetes manifests generated from the repository's rules/ and dashboards/ files."""
