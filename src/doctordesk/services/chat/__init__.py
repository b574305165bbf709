"""Chat: the services of this feature."""
