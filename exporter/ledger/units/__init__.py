"""Unit economics: cost per token and request, energy, and build or buy."""
