"""A real SMTP server on loopback for the mail tests (``aiosmtpd``, in a thread of its own): it keeps every
message it accepted, and can be told to answer the envelope or the content with a code of the test's choosing,
or to hold the content's answer back (a relay that has the mail and has not said so yet)."""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.live import free_port


class Mailbox:
    """The handler: what arrived, and the answers to give."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
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
    def __init__(self) -> None:
        self.mailbox = Mailbox()
        self.port = free_port()
        # A name of its own: without one, aiosmtpd asks the resolver for the machine's name (``socket.getfqdn``) on
        # its loop for every connection, which took seconds here, past the sender's wait for the greeting.
        self._controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port, server_hostname="relay.test")

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> SmtpServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self.mailbox.released.set()
        self._controller.stop()
