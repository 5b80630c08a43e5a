"""Unit tests of exporter.sources: the source table, HTTP, deadlines; a folder per upstream."""
