"""Finance: the month's report, footing to the cent, the statement and the FOCUS export."""
