"""An unchanged poll of the list or the thread list is answered again from memory (web/unchanged_polls.py) with
the very response the full path gave, and only while the full path would give it: a change on the screen, a logout,
a new language choice, other headers or push headers all go down the full path (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import update

from doctordesk.domain.appointments.status import Status
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Shown, Viewer
from doctordesk.services.accounts import auth
from doctordesk.store.tables import AccessToken
from doctordesk.web.unchanged_polls import UnchangedPolls
from tests.integration.screens.test_appointment_list import change_status
from tests.support.review import PENDING_5, REQUESTED, aid

LIST = "/profile/appointments"
THREADS = "/profile/messages/threads"


def from_memory(runtime: Runtime) -> float:
    return runtime.metrics.polls_from_memory._value.get()  # type: ignore[no-any-return]


async def opened(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> dict[str, str]:
    """The headers of ``path``'s unchanged poll, once the full path has answered it (and so kept the answer)."""
    page = await client.put(path, headers=headers)
    assert page.status_code == 200, page.text
    poll = {**headers, "X-Screen-State": page.json()["state"]}
    first = await client.patch(path, headers=poll)
    assert first.status_code == 200 and first.json()["patches"] == []
    return poll


def same_response(a: httpx.Response, b: httpx.Response) -> bool:
    return (a.status_code, a.content, a.headers.multi_items()) == (b.status_code, b.content, b.headers.multi_items())


async def test_the_same_unchanged_poll_is_answered_from_memory_with_the_full_paths_response(
    client: httpx.AsyncClient, login: Any, runtime: Runtime
) -> None:
    for user, path in (("doctor1", LIST), ("support1", THREADS), ("patient1", LIST)):
        me = await login(user)
        poll = await opened(client, path, {**me.headers, "X-Client-Id": f"tab-{user}"})
        full = await client.patch(path, headers=poll)
        before = from_memory(runtime)
        again = await client.patch(path, headers=poll)
        assert from_memory(runtime) == before + 1, user
        assert same_response(full, again), user
        assert again.headers["content-security-policy"] and again.headers["content-language"] == "en"


async def test_a_change_on_the_screen_goes_down_the_full_path(
    client: httpx.AsyncClient, login: Any, runtime: Runtime, demo: Any
) -> None:
    me = await login("doctor1")
    poll = await opened(client, LIST, me.headers)
    await client.patch(LIST, headers=poll)
    before = from_memory(runtime)
    await change_status(runtime, aid(demo, REQUESTED), Status.DECLINED)
    changed = await client.patch(LIST, headers=poll)
    assert changed.status_code == 200 and changed.json()["patches"] != []
    assert from_memory(runtime) == before


async def test_a_logout_is_refused_at_once(client: httpx.AsyncClient, login: Any, runtime: Runtime) -> None:
    me = await login("doctor1")
    poll = await opened(client, LIST, me.headers)
    assert (await client.patch(LIST, headers=poll)).status_code == 200
    assert (await client.post("/auth/logout", headers=me.headers)).status_code == 204
    refused = await client.patch(LIST, headers=poll)
    assert refused.status_code == 401
    assert refused.json()["kind"] == "error"


async def test_a_token_revoked_without_an_event_is_refused_once_the_cache_drops_it(
    client: httpx.AsyncClient, login: Any, runtime: Runtime
) -> None:
    """A revocation whose event was lost: nothing the list shows changed, but the periodic token check drops the
    token from the cache, and the next poll is judged by the full path."""
    me = await login("doctor1")
    poll = await opened(client, LIST, me.headers)
    actor = auth.cached_actor(runtime, me.token)
    assert actor is not None and actor.token_id is not None
    async with runtime.db.transaction() as session:
        await session.execute(
            update(AccessToken).where(AccessToken.id == actor.token_id).values(revoked_at=runtime.clock.now())
        )
    before = from_memory(runtime)
    assert (await client.patch(LIST, headers=poll)).status_code == 200  # the cache still holds it
    runtime.auth_cache.drop_token(actor.token_id)
    assert (await client.patch(LIST, headers=poll)).status_code == 401
    assert from_memory(runtime) == before + 1


async def test_a_new_language_choice_is_answered_in_that_language(
    client: httpx.AsyncClient, login: Any, runtime: Runtime
) -> None:
    me = await login("doctor1")
    poll = await opened(client, LIST, me.headers)
    await client.patch(LIST, headers=poll)
    chosen = await client.put("/profile/language", headers=me.headers, data={"language": "de"})
    assert chosen.status_code == 200
    before = from_memory(runtime)
    german = await client.patch(LIST, headers=poll)
    assert german.headers["content-language"] == "de" and german.json()["patches"] != []
    assert from_memory(runtime) == before


async def test_only_the_same_poll_is_answered_from_memory(
    client: httpx.AsyncClient, login: Any, runtime: Runtime
) -> None:
    """Another user with the same state token, another language asked, another layout, push headers, a body: each
    is judged by the full path."""
    doctor1, doctor2 = await login("doctor1"), await login("doctor2")
    poll = await opened(client, LIST, doctor1.headers)
    await client.patch(LIST, headers=poll)
    before = from_memory(runtime)
    other_user = await client.patch(LIST, headers={**poll, **doctor2.headers})
    assert other_user.status_code == 200
    german = await client.patch(LIST, headers={**poll, "Accept-Language": "de"})
    assert german.headers["content-language"] == "de" and german.json()["patches"] != []
    mobile = await client.patch(LIST, headers={**poll, "X-Layout": "tablet"})
    assert mobile.status_code == 422
    push = {"X-Device-Id": "device-1", "X-Push-Platform": "android", "X-Push-Token": "t1"}
    assert (await client.patch(LIST, headers={**poll, **push})).status_code == 200
    assert (await client.patch(LIST, headers=poll, content=b"x" * 10)).status_code == 200
    assert from_memory(runtime) == before


async def test_an_answer_from_memory_tells_presence(client: httpx.AsyncClient, login: Any, runtime: Runtime) -> None:
    me = await login("doctor1")
    poll = await opened(client, LIST, {**me.headers, "X-Client-Id": "tab-1"})
    told: list[tuple[Viewer, Shown, bool]] = []
    runtime.screens.listeners.append(lambda viewer, shown, *, opened: told.append((viewer, shown, opened)))
    before = from_memory(runtime)
    await client.patch(LIST, headers=poll)
    await client.patch(LIST, headers=poll)
    assert from_memory(runtime) == before + 2
    assert len(told) == 2 and told[0] == told[1]
    viewer, shown, was_opened = told[1]
    assert viewer == Viewer("tab-1", me.user["id"], me.user["role"]) and shown.poll == LIST and not was_opened


async def test_every_screen_whose_rights_follow_its_topics_is_answered_from_memory_and_only_to_its_viewer(
    client: httpx.AsyncClient, login: Any, runtime: Runtime, demo: Any
) -> None:
    """Chat, Review and Approve, offers and administration: the same unchanged poll again comes from memory, and
    another viewer replaying it (the same token, client id and path, their own credentials) never gets that
    answer: a doctor whose appointment it is not gets 404, another admin gets a reset of their own page."""
    requested, pending = aid(demo, REQUESTED), aid(demo, PENDING_5)
    screens = (
        ("doctor1", f"/profile/messages/user-chat?appointment-id={requested}", "doctor3", 404),
        ("doctor1", f"{LIST}/{requested}/approve", "doctor3", 404),
        ("admin", f"{LIST}/{pending}/offers", "doctor3", 404),
        ("admin", "/profile/admin/users", "doctor1", 404),
    )
    for owner, path, stranger, refused in screens:
        me, other = await login(owner), await login(stranger)
        page = await client.put(path, headers={**me.headers, "X-Client-Id": "tab-1"})
        assert page.status_code == 200, page.text
        poll_path = page.json()["poll"]
        poll = {**me.headers, "X-Client-Id": "tab-1", "X-Screen-State": page.json()["state"]}
        full = await client.patch(poll_path, headers=poll)
        assert full.status_code == 200 and full.json()["patches"] == [], path
        before = from_memory(runtime)
        again = await client.patch(poll_path, headers=poll)
        assert from_memory(runtime) == before + 1 and same_response(full, again), path
        replayed = await client.patch(poll_path, headers={**poll, **other.headers})
        assert from_memory(runtime) == before + 1, path
        assert replayed.status_code == refused and replayed.content != full.content, path
    # A second admin replaying the first one's poll of a screen both may see: their own page, as a reset.
    admin_poll = {**(await login("admin")).headers, "X-Client-Id": "tab-1"}
    page = await client.put("/profile/admin/users", headers=admin_poll)
    await client.patch("/profile/admin/users", headers={**admin_poll, "X-Screen-State": page.json()["state"]})
    doctor = await login("doctor1")
    replay = {**doctor.headers, "X-Client-Id": "tab-1", "X-Screen-State": page.json()["state"]}
    assert (await client.patch(LIST, headers=replay)).json()["patches"][0]["op"] == "reset"


async def test_a_chat_token_polled_as_another_appointments_chat_is_no_token(
    client: httpx.AsyncClient, login: Any, demo: Any
) -> None:
    """The part of a chat's token that names its appointment is not sealed; the topics are: a doctor who swaps it
    for another doctor's appointment gets that chat's 404, never an "unchanged"."""
    me = await login("doctor1")
    mine, theirs = aid(demo, REQUESTED), demo.appointments[14]
    page = await client.put(f"/profile/messages/user-chat?appointment-id={mine}", headers=me.headers)
    assert (
        await client.put(f"/profile/messages/user-chat?appointment-id={theirs}", headers=me.headers)
    ).status_code == 404
    inner, _, window = page.json()["state"].rpartition("~")
    forged = f"{inner}~{theirs}-{window.split('-', 1)[1]}"
    poll = {**me.headers, "X-Screen-State": forged}
    response = await client.patch(f"/profile/messages/load-more?appointment-id={theirs}", headers=poll)
    assert response.status_code == 404, response.text


async def test_at_most_size_answers_are_kept(client: httpx.AsyncClient, login: Any, runtime: Runtime, app: Any) -> None:
    me = await login("doctor1")
    layer = app.middleware_stack
    assert isinstance(layer, UnchangedPolls)
    layer.size = 3
    polls = [await opened(client, LIST, {**me.headers, "X-Client-Id": f"tab-{n}"}) for n in range(5)]
    assert len(layer._kept) == 3
    before = from_memory(runtime)
    await client.patch(LIST, headers=polls[0])  # dropped first: the full path, which keeps it again
    await client.patch(LIST, headers=polls[4])
    assert from_memory(runtime) == before + 1
