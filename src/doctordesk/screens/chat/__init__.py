"""Chat: the screens of this feature."""
