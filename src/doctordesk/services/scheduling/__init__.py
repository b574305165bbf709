"""Scheduling: the services of this feature."""
