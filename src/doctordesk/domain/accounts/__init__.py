"""Accounts: the domain of this feature."""
