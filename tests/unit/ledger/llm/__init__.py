"""Unit tests of exporter.ledger.llm: routing, usage samples, re-attribution and pricing drift."""
