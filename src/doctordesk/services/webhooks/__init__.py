"""Webhooks: the services of this feature."""
