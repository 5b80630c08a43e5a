"""GPU prices: per model and flavor, the prices applied, and prices built from capex and power."""
