"""A signing secret, shared by webhook endpoints and FHIR rest-hook subscriptions: drawn once, shown once."""

from __future__ import annotations

import base64
import secrets

SECRET_BYTES = 32


def new_secret() -> str:
    """A signing secret in the Standard Webhooks form: ``whsec_`` and 32 random bytes, base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()
