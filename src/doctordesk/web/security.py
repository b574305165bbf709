"""Security headers for every response: a strict Content-Security-Policy for the web app, no MIME sniffing, no
referrers leaving the site, no framing.

The web app runs only its own module scripts and stylesheet (no inline script or style), talks only to this origin
and shows attachment images through ``blob:`` URLs it creates after an authenticated fetch. The interactive API
docs (``/docs``, ``/redoc``) load their assets from a CDN, so they get a policy of their own.
"""

from __future__ import annotations

from starlette.types import Scope

from doctordesk.web.header_middleware import HeaderMiddleware, Headers

APP_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' blob: data:",
        "font-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    ]
)
DOCS_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net",
        "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net",
        "img-src 'self' data: https://fastapi.tiangolo.com",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    ]
)
DOCS_PATHS = ("/docs", "/redoc")

COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
]


def with_security_headers(path: str, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with this service's security headers for a response to ``path`` (ours replace any set)."""
    policy = DOCS_POLICY if path.startswith(DOCS_PATHS) else APP_POLICY
    ours = {b"content-security-policy", *(name for name, _ in COMMON)}
    kept = [(k, v) for k, v in headers if k.lower() not in ours]
    return [*kept, (b"content-security-policy", policy.encode()), *COMMON]


class SecurityHeaders(HeaderMiddleware):
    """This service's security headers on every HTTP response."""

    def headers(self, scope: Scope, headers: Headers) -> Headers:
        return with_security_headers(scope.get("path", ""), headers)
