"""Integration tests: the real exporter against the demo's loopback fakes, worker processes."""
