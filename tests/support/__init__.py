"""Helpers the kinds of tests share; they start nothing themselves."""
