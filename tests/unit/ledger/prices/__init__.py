"""Unit tests of exporter/ledger/prices/."""
