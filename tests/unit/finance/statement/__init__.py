"""Unit tests of exporter.finance.statement: figures and the HTML page."""
