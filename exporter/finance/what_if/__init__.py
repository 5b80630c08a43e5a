"""What a closed month would have charged under another policy, price, quota or throughput."""
