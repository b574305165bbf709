"""Transfer: the services of this feature."""
