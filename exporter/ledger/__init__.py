"""The ledger: pure chargeback maths from the sources' snapshots to one typed result, in money."""
