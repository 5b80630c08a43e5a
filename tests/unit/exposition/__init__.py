"""Unit tests of exporter.exposition: the catalogue, rendering and the text formats."""
