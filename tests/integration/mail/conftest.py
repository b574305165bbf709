"""The mail tests' relay: a real SMTP server on loopback, and settings that send through it (the tests drive the
sender round by round, so none runs in the app, nor a reminder sender)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from doctordesk.config import Settings
from tests.support.smtp_server import SmtpServer

SENDER = "praxis@clinic.example"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings], smtp: SmtpServer) -> Settings:
    values: dict[str, Any] = {
        "smtp_url": smtp.url,
        "mail_from": SENDER,
        "mail_in_process": False,
        "mail_timeout_seconds": 5,
        "mail_lease_seconds": 15,
        "reminder_in_process": False,  # reminders are tests/integration/reminders/'
    }
    return settings_factory(database_url, **values)
