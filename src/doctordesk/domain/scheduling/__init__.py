"""Scheduling: the domain of this feature."""
