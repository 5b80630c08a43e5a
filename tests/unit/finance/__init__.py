"""Unit tests of exporter.finance: the report, footing, the statement and FOCUS."""
