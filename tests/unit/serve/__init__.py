"""Unit tests of exporter.serve: the refresher, the server's parsing, the worker's pacing."""
