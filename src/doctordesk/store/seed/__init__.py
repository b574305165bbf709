"""Demo data: the clinic, its calendar, offers, chats and sample files."""
