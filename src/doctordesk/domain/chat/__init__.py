"""Chat: the domain of this feature."""
