"""Tests of the light HTTP client."""
