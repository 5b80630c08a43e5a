"""Configuration: the YAML schema, its line-tracking loader, validation and the web config."""
