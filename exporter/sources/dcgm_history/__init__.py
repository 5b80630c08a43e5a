"""A window of DCGM and Kueue quota history from Prometheus, for right-sizing advice."""
