"""Queues priced: preempted work, waiting, ClusterQueue ceilings, borrowing ahead, fair share."""
