"""Fixtures shared by the webhook and FHIR Subscription tests: a receiver on loopback and a dispatcher driven
round by round."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from doctordesk.bootstrap import build_webhook_dispatcher
from doctordesk.runtime import Runtime
from doctordesk.workers.webhook_dispatcher import WebhookDispatcher
from tests.support.webhook_receiver import WebhookReceiver


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    r = WebhookReceiver().up()
    yield r
    r.down()


@pytest.fixture
async def dispatcher(runtime: Runtime) -> AsyncIterator[WebhookDispatcher]:
    d = build_webhook_dispatcher(runtime)
    yield d
    await d.close()
