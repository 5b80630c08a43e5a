"""Unit tests of exporter/ledger/dimensions/."""
