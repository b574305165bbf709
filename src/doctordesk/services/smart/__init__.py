"""SMART App Launch (docs/smart.md): client registration, authorization and consent, tokens, id tokens."""
