"""Accounts: the services of this feature."""
