"""The chat screens: a thread, its append-only updates, and the agents' thread list."""
