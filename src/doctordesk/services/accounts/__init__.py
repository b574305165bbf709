"""Accounts: log in, tokens, devices, languages, login throttling, password links."""
