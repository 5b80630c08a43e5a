"""Unit tests of the what-if: its keys, the month joined again, and money conserved."""
