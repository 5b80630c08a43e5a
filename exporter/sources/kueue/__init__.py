"""Kueue: ClusterQueue quota and ResourceFlavors from the Kubernetes API."""
