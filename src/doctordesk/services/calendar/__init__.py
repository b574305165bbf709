"""Calendar: the services of this feature."""
