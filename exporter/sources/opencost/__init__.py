"""OpenCost: `/allocation` and `/assets` read into typed, validated records."""
