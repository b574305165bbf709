"""The rules of a SMART client's registration (docs/smart.md#clients): its kind, its redirect URIs and its id."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from urllib.parse import urlsplit

from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.texts import N_

MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI_CHARS = 500
CLIENT_ID_PREFIX = "smart_"
SECRET_PREFIX = "ddcs_"
ACCESS_PREFIX = "ddat_"
REFRESH_PREFIX = "ddrt_"
SYSTEM_ACCESS_PREFIX = "ddst_"  # a backend service's access token (docs/smart.md#backend-services)
LAUNCH_PREFIX = "ddln_"  # an EHR launch value (docs/smart.md#ehr-launch)
# The algorithms a backend service's client assertion may be signed with (SMART Backend Services: RS384, ES384).
ASSERTION_ALGORITHMS = ("RS384", "ES384")
MAX_JWKS_KEYS = 10
# How a client secret is stored: SHA-256, as API keys are (the secret is 256 random bits: a slow password hash adds
# nothing but a cost every wrong guess makes the server pay). Older rows hold argon2 hashes ("$argon2id$...").
SECRET_DIGEST = "sha256$"


def secret_digest(secret: str) -> str:
    return SECRET_DIGEST + hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(stored: str, secret: str) -> bool:
    """A secret against its fast digest (constant time); False for any other kind of stored hash."""
    return stored.startswith(SECRET_DIGEST) and hmac.compare_digest(stored, secret_digest(secret))


# A redirect URI's form as a JSON Schema pattern (the admin API states it; ``redirect_uri_problem`` decides).
REDIRECT_URI_PATTERN = r"^(https://[!-~]+|http://(127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?(/[!-~]*)?)$"


class ClientKind(StrEnum):
    """``public``: an app that cannot keep a secret (a browser or phone app: PKCE alone); ``confidential``: a
    server-side app that authenticates with its secret (``client_secret_basic`` or ``client_secret_post``);
    ``backend``: a system without a user (SMART Backend Services), authenticated by a JWT signed with its own key
    (``private_key_jwt``), with ``system/`` scopes only."""

    PUBLIC = "public"
    CONFIDENTIAL = "confidential"
    BACKEND = "backend"


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """A registered app as admins see it (never its secret)."""

    id: int
    client_id: str
    name: str
    kind: ClientKind
    redirect_uris: tuple[str, ...]
    allowed_scopes: tuple[str, ...]
    active: bool
    created_at: datetime
    jwks_uri: str | None = None  # a backend service's key set, fetched from its address
    key_ids: tuple[str, ...] = ()  # a backend service's key set given inline: the ``kid`` of each key
    launch_url: str | None = None  # where a record system sends the browser for an EHR launch of the app


def _loopback(host: str) -> bool:
    """A loopback IP literal. Not ``localhost``: a name can resolve elsewhere (a hosts file, a resolver that
    answers it), and RFC 8252 section 8.3 asks for the literal."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None: an absolute ``https`` URL without a fragment, or ``http`` on
    the loopback address (a native app's listener, RFC 8252 section 7.3). The browser leaves the web app for it, so
    nothing but these two schemes is followed."""
    if not uri.isascii() or not is_plain_text(uri, max_chars=MAX_REDIRECT_URI_CHARS) or any(c.isspace() for c in uri):
        return N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
    except ValueError:
        return N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")
    if parts.fragment or "#" in uri or not host or parts.username or parts.password:
        return N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")
    if parts.scheme == "https" or (parts.scheme == "http" and _loopback(host)):
        return None
    return N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")


def looks_like_access_token(token: str) -> bool:
    """A SMART access token: an app's for a user (``ddat_``) or a backend service's (``ddst_``)."""
    return token.startswith((ACCESS_PREFIX, SYSTEM_ACCESS_PREFIX))
