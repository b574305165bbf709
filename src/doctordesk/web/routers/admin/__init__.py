"""Admin: the routers of this feature."""
