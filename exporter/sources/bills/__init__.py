"""The bill sources: cloud FOCUS cost exports and the LLM providers' cost APIs."""
