"""Upstream sources: each module only fetches and parses one upstream into typed records."""
