"""The web client when the service is busy (503 SERVICE_BUSY with ``Retry-After``, docs/protocol.md#busy): a poll
is sent again after the stated time (not the list's timeout) and one busy answer shows nothing; a user's action is
sent again by itself, so what they typed is kept and no error shows. A real server on PostgreSQL with a short lock
timeout; another process holds a table (``LOCK TABLE``: even reads wait) so the request that needs it is answered
busy."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from doctordesk.store.review_tables import ReviewDraft
from doctordesk.store.tables import Appointment
from tests.e2e.web.conftest import decide_elsewhere, sign_in
from tests.e2e.web.test_review import open_review, weekday_ahead
from tests.support import databases
from tests.support.live import serving
from tests.support.moments import MONDAY_MORNING

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

POLL_SECONDS = 6
REQUEST = 2  # one of doctor1's open requests
PLAIN_REQUEST = 1  # another, whose Review and Approve the action test edits

# Holds a table until its standard input closes (a process of its own: the browser test's API is synchronous).
HOLDER = """
import asyncio, sys
import asyncpg
async def main():
    conn = await asyncpg.connect(sys.argv[1])
    async with conn.transaction():
        await conn.execute(f"LOCK TABLE {sys.argv[2]} IN ACCESS EXCLUSIVE MODE")
        print("locked", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await conn.close()
asyncio.run(main())
"""


@pytest.fixture
def pg_server(tmp_path):
    url = databases.postgres_url()
    databases._run(lambda: databases.truncate_postgres(url))  # playwright's loop runs in this thread
    env = {
        "DOCTORDESK_DATABASE_URL": url,
        "DOCTORDESK_DB_LOCK_TIMEOUT_MS": "200",
        "DOCTORDESK_POLL_LIST_SECONDS": str(POLL_SECONDS),
    }
    with serving(tmp_path / "live", at=MONDAY_MORNING, **env) as live:
        yield live


@contextmanager
def holding(server, table: str) -> Iterator[None]:
    """Another process holds ``table`` while the block runs."""
    dsn = databases._asyncpg_dsn(server.extra_env["DOCTORDESK_DATABASE_URL"])
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, dsn, table], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()


def test_a_busy_poll_is_sent_again_after_retry_after_and_shows_no_error(pg_server, new_page, problems):
    problems.allowed.extend(["net::", "Failed to load resource"])
    page = new_page(pg_server.url)
    page.route("**/profile/stream?*", lambda route: route.abort())
    polls: list[tuple[float, int]] = []
    page.on(
        "response",
        lambda r: (
            polls.append((time.monotonic(), r.status))
            if r.request.method == "PATCH" and "/profile/appointments" in r.url
            else None
        ),
    )
    sign_in(page, "doctor1")
    decide_elsewhere(pg_server.url, REQUEST, "decline")
    with holding(pg_server, Appointment.__tablename__):
        deadline = time.monotonic() + POLL_SECONDS * 3
        while not any(status == 503 for _, status in polls) and time.monotonic() < deadline:
            page.wait_for_timeout(100)
    busy = [at for at, status in polls if status == 503]
    assert busy, polls
    page.locator(f'[data-id="status-{REQUEST}"][data-value="Declined"]').wait_for(timeout=POLL_SECONDS * 1000)
    after = [at for at, status in polls if status == 200 and at > busy[0]]
    assert after and after[0] - busy[0] < POLL_SECONDS - 2  # Retry-After (1 s), not the list's 6 s timeout
    assert page.locator('[role="alert"]:visible').count() == 0


def test_a_busy_action_is_sent_again_by_itself_and_what_was_typed_is_kept(pg_server, new_page, problems):
    problems.allowed.extend(["Failed to load resource"])  # the busy answer itself, in the console
    page = new_page(pg_server.url)
    sign_in(page, "doctor1")
    open_review(page, PLAIN_REQUEST)
    if page.locator('[data-id="alternative-1"]').count() == 0:
        page.locator('[data-id="another-alternative"]').click()
    card = page.locator('[data-id="alternative-1"]')
    day = card.locator('[data-name="date~1"]')
    day.wait_for()
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if r.request.method in ("POST", "PATCH") else None)
    with holding(pg_server, ReviewDraft.__tablename__):
        day.fill(weekday_ahead(12))
        day.dispatch_event("change")
        deadline = time.monotonic() + 10
        while 503 not in answers and time.monotonic() < deadline:
            page.wait_for_timeout(50)
    assert 503 in answers, answers
    page.locator('[data-id="date~1"].is-highlighted').wait_for()  # the same change, sent again, went through
    assert answers[answers.index(503) + 1 :].count(200) >= 1
    assert page.locator(".screen-banner:visible").count() == 0  # no error banner (the card's own hint asks for a time)
    assert page.locator('[data-id="date~1"] [role="alert"]').count() == 0
    page.reload()  # the server kept it
    page.locator('[data-id="alternative-1"] [data-name="date~1"]').wait_for()
    assert page.locator('[data-id="date~1"].is-highlighted').count() == 1
