"""Unit tests of exporter/ledger/costs/."""
