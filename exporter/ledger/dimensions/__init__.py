"""Beyond the team: shared costs spread, then the ledger split by each configured dimension."""
