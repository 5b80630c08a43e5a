"""The report's figures, tables and formats: what finance reads from one typed month."""
