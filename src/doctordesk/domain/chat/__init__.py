"""Chat rules: who reads and writes a thread, what a message holds, what is unread."""
