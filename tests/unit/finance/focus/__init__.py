"""Unit tests of exporter.finance.focus: FOCUS rows, days and resources."""
