"""The exposition: the metric catalogue as data, samples, and their rendering to bytes."""
