"""Unit tests of exporter.ledger: attribution, chargeback, costs, quota, prices, the join."""
