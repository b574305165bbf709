"""Integration: the routers of this feature."""
