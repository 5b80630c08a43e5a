"""The exposition: the metric catalogue as data, the series of the ledger's result, the bytes."""
