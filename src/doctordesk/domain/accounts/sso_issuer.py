"""The single sign-on issuer's scheme (docs/accounts.md#single-sign-on): OpenID Connect requires https, so the
discovery, the keys and the code exchange never travel in clear. Plain http is for a developer's own machine only:
with the development setting on and a loopback host."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from doctordesk.domain.texts import N_

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str | None) -> bool:
    """127.0.0.0/8, ::1 or ``localhost`` (the names that never leave the machine)."""
    if not host:
        return False
    if host.lower().rstrip(".") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def issuer_problem(issuer: str, *, allow_http_loopback: bool) -> str | None:
    """Why ``issuer``'s scheme is refused (None: it is not); the host's own rules are judged elsewhere."""
    try:
        parts = urlsplit(issuer.strip())
    except ValueError:
        return N_("The provider's issuer URL (https://…).")
    if parts.scheme == "https":
        return None
    if parts.scheme != "http":
        return N_("The provider's issuer URL (https://…).")
    if allow_http_loopback and is_loopback(parts.hostname):
        return None
    if allow_http_loopback:
        return N_("Plain http:// is accepted only for a provider on this machine (127.0.0.1, ::1, localhost).")
    return N_("Use https://: over plain http:// the sign-in would travel unencrypted.")
