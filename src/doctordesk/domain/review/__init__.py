"""Review: the domain of this feature."""
