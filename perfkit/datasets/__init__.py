"""Deterministic dataset generators and their placement on the compared storages."""
