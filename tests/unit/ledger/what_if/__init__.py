"""Unit tests of exporter.ledger.what_if: the records a what-if changes."""
