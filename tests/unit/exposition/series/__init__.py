"""Unit tests of exporter.exposition.series: samples built from the typed result."""
