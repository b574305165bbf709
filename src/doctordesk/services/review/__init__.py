"""Review: the services of this feature."""
