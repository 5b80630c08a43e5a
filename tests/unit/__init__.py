"""Unit tests: the runtime package's modules in-process, no process, socket or browser."""
