"""Integration: the services of this feature."""
