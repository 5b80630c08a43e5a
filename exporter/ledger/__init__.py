"""The ledger: pure chargeback maths from typed source records to per-team money and samples."""
