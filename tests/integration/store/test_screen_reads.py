"""A screen's reads on SQLite: the appointment list's changed poll (an event on the doctor's topic, so it renders
again) runs its statements on the event loop's thread, none handed to a reader thread, and answers the same as with
the readers' threads (``DOCTORDESK_DB_SQLITE_INLINE_SCREEN_READS``). On PostgreSQL there is one engine, nothing to
hand off, so these tests run on SQLite only."""

from __future__ import annotations

import aiosqlite
import pytest

from doctordesk.domain.events import doctor_topic

LIST = "/profile/appointments"
# SQLite alone has reader threads to hand statements to.
pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture
def handed_off(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls aiosqlite connections handed to their threads (the inline connection runs its own)."""
    count = [0]
    handed = aiosqlite.Connection._execute

    async def counted(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        count[0] += 1
        return await handed(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return count


async def _changed_poll(client, runtime, doctor, headers: dict[str, str], state: str) -> dict:
    runtime.screens.revisions.bump([doctor_topic(doctor)])
    answer = await client.patch(LIST, headers={**headers, "X-Screen-State": state})
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] != state  # rendered again, not answered from memory
    return answer.json()


async def test_the_lists_changed_poll_hands_no_statement_to_a_thread(client, login, demo, runtime, handed_off):
    doctor = await login("doctor1")
    page = await client.put(LIST, headers=doctor.headers)
    assert page.status_code == 200, page.text
    before = handed_off[0]
    answer = await _changed_poll(client, runtime, demo.users["doctor1"], doctor.headers, page.json()["state"])
    assert handed_off[0] == before
    assert answer["kind"] == "update" and answer["patches"] == []  # nothing the list shows changed


@pytest.fixture
def inline_reads() -> bool:
    return True  # the default; a test parametrizes it off


@pytest.fixture
def settings(database_url, settings_factory, inline_reads):
    # No background loop of the app's own reads meanwhile (the waitlist's rounds, woken by the list's event).
    return settings_factory(
        database_url, db_sqlite_inline_screen_reads=inline_reads, waitlist_in_process=False, bulk_in_process=False
    )


@pytest.mark.parametrize("inline_reads", [False])
async def test_with_the_setting_off_the_same_poll_reads_on_the_readers_threads(
    client, login, demo, runtime, handed_off
):
    assert runtime.db.screen_read_engine is runtime.db.read_engine
    doctor = await login("doctor1")
    page = await client.put(LIST, headers=doctor.headers)
    before = handed_off[0]
    answer = await _changed_poll(client, runtime, demo.users["doctor1"], doctor.headers, page.json()["state"])
    assert handed_off[0] > before
    assert answer["kind"] == "update" and answer["patches"] == []
