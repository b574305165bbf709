"""SMART App Launch: the rules of scopes, clients and launches as plain Python (docs/smart.md)."""
