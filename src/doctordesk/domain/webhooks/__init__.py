"""Webhooks: the domain of this feature."""
