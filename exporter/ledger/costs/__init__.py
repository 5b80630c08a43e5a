"""Costs of the team ledger: windows placed on teams, idle policies, quota, GPU states."""
