"""Admin: the services of this feature."""
