"""The integration API: service accounts and keys, appointment requests, outside events."""
