"""SMART App Launch at the HTTP edge (docs/smart.md): the OAuth 2 endpoints and the consent screen."""
