"""The SMTP relay as ``DOCTORDESK_SMTP_URL`` names it (docs/notifications.md#the-relay).

Three schemes, so the URL alone says how the connection is protected:

    smtp://host[:25]            plain SMTP (a relay on the same host or network)
    smtp+starttls://host[:587]  plain, then STARTTLS, required (the message is never sent without it)
    smtps://host[:465]          TLS from the first byte (implicit TLS, RFC 8314)

A user and password in the URL's user-info (percent-encoded) are sent with AUTH after TLS is up, never in clear:
``smtp://`` with a user name means STARTTLS, required, as ``smtp+starttls://`` (the usual ``smtp://user:pass@host:587``
of a provider's relay works, and a password never crosses the network unencrypted).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

DEFAULT_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


@dataclass(frozen=True, slots=True)
class Relay:
    host: str
    port: int
    implicit_tls: bool
    starttls: bool
    username: str | None = None
    password: str | None = None

    def __repr__(self) -> str:  # never the password, in a log line or a traceback
        return f"Relay({self.host}:{self.port}, implicit_tls={self.implicit_tls}, starttls={self.starttls})"


def parse_relay(url: str) -> Relay:
    """The relay ``url`` names; ValueError (naming the problem, never the password) when it names none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValueError("not a valid URL (smtp://, smtp+starttls:// or smtps://host:port)") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError("use smtp://host:port, smtp+starttls://host:port or smtps://host:port")
    if not parts.hostname:
        raise ValueError("the URL names no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("the URL takes no path, query or fragment (the scheme says how to use TLS)")
    if parts.password is not None and not parts.username:
        raise ValueError("a password needs a user name")
    return Relay(
        host=parts.hostname,
        port=port or DEFAULT_PORTS[scheme],
        implicit_tls=scheme == "smtps",
        starttls=scheme == "smtp+starttls" or (scheme == "smtp" and bool(parts.username)),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
    )
