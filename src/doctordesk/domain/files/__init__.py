"""Files: the domain of this feature."""
