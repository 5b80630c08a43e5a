"""LiteLLM: team budgets and the month's usage per team and model from the proxy."""
