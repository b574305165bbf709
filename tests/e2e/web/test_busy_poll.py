"""The web client when the service is busy: a poll answered 503 SERVICE_BUSY with ``Retry-After`` is sent again
after the stated time (not the list's timeout), and one busy answer shows nothing. A real server on PostgreSQL with
a short lock timeout; another process holds the appointments table (``LOCK TABLE``: even reads wait), so the poll
that must render the list's change is answered busy. The stream is blocked: polling alone brings the change."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from doctordesk.store.tables import Appointment
from tests.e2e.web.conftest import decide_elsewhere, sign_in
from tests.support import databases
from tests.support.live import serving
from tests.support.moments import MONDAY_MORNING

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

POLL_SECONDS = 6
REQUEST = 2  # one of doctor1's open requests

# Holds the table until its standard input closes (a process of its own: the browser test's API is synchronous).
HOLDER = f"""
import asyncio, sys
import asyncpg
async def main():
    conn = await asyncpg.connect(sys.argv[1])
    async with conn.transaction():
        await conn.execute("LOCK TABLE {Appointment.__tablename__} IN ACCESS EXCLUSIVE MODE")
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
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, databases._asyncpg_dsn(pg_server.extra_env["DOCTORDESK_DATABASE_URL"])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        deadline = time.monotonic() + POLL_SECONDS * 3
        while not any(status == 503 for _, status in polls) and time.monotonic() < deadline:
            page.wait_for_timeout(100)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    busy = [at for at, status in polls if status == 503]
    assert busy, polls
    page.locator(f'[data-id="status-{REQUEST}"][data-value="Declined"]').wait_for(timeout=POLL_SECONDS * 1000)
    after = [at for at, status in polls if status == 200 and at > busy[0]]
    assert after and after[0] - busy[0] < POLL_SECONDS - 2  # Retry-After (1 s), not the list's 6 s timeout
    assert page.locator('[role="alert"]:visible').count() == 0
