"""Administration: the admins' use cases and the pages of their screens."""
