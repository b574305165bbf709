"""Transfer: the domain of this feature."""
