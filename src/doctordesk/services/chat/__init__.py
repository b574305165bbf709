"""Chat: opening and reading a thread, sending messages with files, the thread list."""
