"""The request's language: from ``Accept-Language`` here, replaced by the user's stored choice once the caller is
authenticated (``web/deps.py``). Every response says which it used (``Content-Language``)."""

from __future__ import annotations

from starlette.types import Scope

from doctordesk import i18n
from doctordesk.web.header_middleware import HeaderMiddleware, Headers


class Language(HeaderMiddleware):
    """The locale is a context variable, so it holds for the whole request's task."""

    def begin(self, scope: Scope) -> None:
        accept = None
        for name, value in scope.get("headers", ()):
            if name == b"accept-language":
                accept = value.decode("latin-1")
                break
        i18n.use(i18n.negotiate(accept))

    def headers(self, scope: Scope, headers: Headers) -> Headers:  # noqa: ARG002 (the scope is for others)
        return [*headers, (b"content-language", i18n.current().encode()), (b"vary", b"Accept-Language")]
