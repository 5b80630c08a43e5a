"""Unit tests of exporter.config: the schema, the loader, the offline check, the web config."""
