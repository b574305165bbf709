"""The waitlist: patients waiting for an earlier time, and the freed times offered to them (docs/waitlist.md)."""
