"""The waitlist's tables (docs/waitlist.md)."""
