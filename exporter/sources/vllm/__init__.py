"""vLLM: each served model's request prefill and decode time, from the Prometheus scraping it."""
