"""A what-if's settings and the changes it makes to the month's records before the join (pure)."""
