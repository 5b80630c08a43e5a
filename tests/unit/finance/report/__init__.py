"""Unit tests of exporter/finance/report/."""
