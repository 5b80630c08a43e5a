"""The FOCUS 1.2 export: rows per team, component, resource and day, and the CSV writer."""
