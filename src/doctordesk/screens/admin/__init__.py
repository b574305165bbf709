"""Admin: the screens of this feature."""
