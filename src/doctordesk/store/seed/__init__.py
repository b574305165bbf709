"""Seed: the store of this feature."""
