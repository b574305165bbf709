"""A real SMTP server on loopback for the mail tests (``aiosmtpd``, in a thread of its own): it keeps every
message it accepted, and can be told to answer the envelope or the content with a code of the test's choosing,
or to hold the content's answer back (a relay that has the mail and has not said so yet). It can also speak TLS
(STARTTLS, required, or TLS from the first byte) with a certificate of ``tests/support/tls.py`` and require AUTH
with a user and password; for each message it notes whether it came over TLS and as which user."""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import warnings
from email.message import EmailMessage
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from tests.support.live import free_port
from tests.support.tls import TlsAuthority


class Mailbox:
    """The handler: what arrived, and the answers to give."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.delivered_over: list[tuple[bool, str | None]] = []  # per message: over TLS, as which user (None: no AUTH)
        self.logins: list[tuple[bool, str]] = []  # every AUTH the server was given: over TLS, which user
        self.greetings: list[str] = []  # the name each sender gave with EHLO or HELO, per message accepted
        self.rcpt_answers: list[str] = []  # answered in turn to RCPT TO, then "250 OK"
        self.data_answers: list[str] = []  # answered in turn to DATA, then "250 OK"
        self.hold_after: int | None = None  # content past this many is kept but never answered
        self.released = threading.Event()
        self._lock = threading.Lock()

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:  # noqa: N802
        if self.rcpt_answers:
            return self.rcpt_answers.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if self.data_answers:
            return self.data_answers.pop(0)
        with self._lock:
            self.received.append(envelope.original_content or envelope.content)
            tls = server.transport.get_extra_info("ssl_object") is not None
            self.delivered_over.append((tls, session.auth_data if session.authenticated else None))
            self.greetings.append(session.host_name)
            held = self.hold_after is not None and len(self.received) > self.hold_after
        if held:
            await asyncio.get_running_loop().run_in_executor(None, self.released.wait)
        return "250 OK"

    def messages(self) -> list[EmailMessage]:
        with self._lock:
            raw = list(self.received)
        return [email.message_from_bytes(r, policy=email.policy.default) for r in raw]  # type: ignore[misc]


class SmtpServer:
    """``tls``: None (plain), ``"starttls"`` (plain, then STARTTLS, required before anything else) or ``"implicit"``
    (TLS from the first byte), with ``authority``'s certificate; ``login``: (user, password) that AUTH must give
    (the server refuses AUTH before TLS, as relays do), and then requires it for every mail."""

    def __init__(
        self,
        *,
        tls: Literal["starttls", "implicit"] | None = None,
        authority: TlsAuthority | None = None,
        login: tuple[str, str] | None = None,
    ) -> None:
        self.mailbox = Mailbox()
        self.port = free_port()
        self.tls = tls
        options: dict[str, Any] = {}
        if tls is not None:
            assert authority is not None, "TLS needs a certificate"
            context = authority.server_context()
            if tls == "starttls":
                options.update(tls_context=context, require_starttls=True)
            else:
                options["ssl_context"] = context
        if login is not None:
            # AUTH only over TLS (aiosmtpd tells TLS by STARTTLS alone: from the first byte, it is TLS anyway).
            # A plain server (tls None) takes AUTH in clear: what a client must never send it.
            options.update(
                authenticator=_Authenticator(login, self.mailbox),
                auth_required=True,
                auth_require_tls=tls == "starttls",
            )
        # A name of its own: without one, aiosmtpd asks the resolver for the machine's name (``socket.getfqdn``) on
        # its loop for every connection, which took seconds here, past the sender's wait for the greeting.
        self._controller = _Controller(
            self.mailbox, hostname="127.0.0.1", port=self.port, server_hostname="relay.test", **options
        )

    @property
    def url(self) -> str:
        scheme = {None: "smtp", "starttls": "smtp+starttls", "implicit": "smtps"}[self.tls]
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self) -> SmtpServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self.mailbox.released.set()
        self._controller.stop()


class _Controller(Controller):
    def factory(self) -> SMTP:
        # AUTH over implicit TLS: aiosmtpd warns of "AUTH without TLS" as it sees TLS only in STARTTLS.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS", UserWarning)
            return SMTP(self.handler, **self.SMTP_kwargs)


class _Authenticator:
    """AUTH PLAIN / LOGIN with one user and password; the user is the session's ``auth_data``."""

    def __init__(self, login: tuple[str, str], mailbox: Mailbox) -> None:
        self.login = login
        self.mailbox = mailbox

    def __call__(self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        given = (auth_data.login.decode(), auth_data.password.decode())
        tls = server.transport.get_extra_info("ssl_object") is not None
        self.mailbox.logins.append((tls, given[0]))
        # handled=False: the server answers itself (235, or 535 "Authentication credentials invalid").
        if given != self.login:
            return AuthResult(success=False, handled=False)
        return AuthResult(success=True, handled=False, auth_data=given[0])
