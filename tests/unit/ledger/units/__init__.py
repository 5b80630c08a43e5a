"""Unit tests of exporter/ledger/units/."""
