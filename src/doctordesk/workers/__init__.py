"""Background workers above the services: webhook and push dispatchers, token checks, and their wiring."""
