"""A state token is bound to the viewer it was issued to (user and role, ``screens/state.py``): another viewer's
token — even one whose revision stamp matches, for the very same page — is no token at all. On every screen with a
state token the poll (and an action, and a chat send) answers with the whole page (a reset), never "unchanged" and
never a diff from the other viewer's page (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.chat import send
from tests.support.review import CHEN_PRESCRIPTION, PENDING_5, REQUESTED, aid


@dataclass(frozen=True)
class Screen:
    name: str
    open: str  # the PUT
    poll: str  # the PATCH answered "unchanged" when nothing changed
    owner: str  # the viewer whose token is replayed
    other: str  # the viewer who replays it
    others: str | None = None  # the other viewer's own screen, when the owner's is not theirs to see

    def path_of_other(self, path: str) -> str:
        return path.replace("{requested}", self.others) if self.others else path


APPROVE = "/profile/appointments/{requested}/approve"
SCREENS = [
    Screen("appointment list", "/profile/appointments", "/profile/appointments", "support1", "support2"),
    Screen("appointment list, doctors", "/profile/appointments", "/profile/appointments", "doctor2", "doctor3"),
    Screen("review and approve", APPROVE, APPROVE, "doctor1", "doctor3", others="{chen}"),
    Screen(
        "offers",
        "/profile/appointments/{offered}/offers",
        "/profile/appointments/{offered}/offers",
        "patient1",
        "support1",
    ),
    Screen(
        "chat",
        "/profile/messages/user-chat?appointment-id={requested}",
        "/profile/messages/load-more?appointment-id={requested}",
        "doctor1",
        "support1",
    ),
    Screen("chat threads", "/profile/messages/threads", "/profile/messages/threads", "support1", "support2"),
    Screen("booking", "/profile/book", "/profile/book", "patient1", "patient2"),
    Screen("calendar feed", "/profile/calendar-feed", "/profile/calendar-feed", "doctor2", "doctor3"),
    Screen("admin users", "/profile/admin/users", "/profile/admin/users", "admin", "admin2"),
    Screen("admin audit", "/profile/admin/audit", "/profile/admin/audit", "admin", "admin2"),
    Screen("admin fees", "/profile/admin/fees", "/profile/admin/fees", "admin", "admin2"),
    Screen("admin hours", "/profile/admin/hours", "/profile/admin/hours", "admin", "admin2"),
    Screen("admin insurance", "/profile/admin/insurance", "/profile/admin/insurance", "admin", "admin2"),
    Screen("admin locations", "/profile/admin/locations", "/profile/admin/locations", "admin", "admin2"),
    Screen("admin webhooks", "/profile/admin/webhooks", "/profile/admin/webhooks", "admin", "admin2"),
]


async def _second_admin(client: Any, login: Any) -> Any:
    admin = await login("admin")
    body = {"username": "admin2", "role": "admin", "display_name": "Second Admin", "password": "second-admin-pw"}
    created = await client.post("/admin/users", json=body, headers=admin.headers)
    assert created.status_code == 201, created.text
    return await login("admin2", "second-admin-pw")


def _stamp(token: str) -> str:
    return token.split(".")[1]


def _is_reset(answer: dict[str, Any]) -> bool:
    return [p["op"] for p in answer["patches"]] == ["reset"]


@pytest.mark.parametrize("screen", SCREENS, ids=[s.name for s in SCREENS])
async def test_another_viewers_state_token_re_renders_the_whole_screen(client, login, demo, screen):
    ids = {"requested": aid(demo, REQUESTED), "offered": aid(demo, PENDING_5), "chen": aid(demo, CHEN_PRESCRIPTION)}
    owner = await login(screen.owner)
    other = await _second_admin(client, login) if screen.other == "admin2" else await login(screen.other)
    opened = await client.put(screen.open.format(**ids), headers=owner.headers)
    assert opened.status_code == 200, opened.text
    stolen = opened.json()["state"]
    mine = await client.put(screen.path_of_other(screen.open).format(**ids), headers=other.headers)
    assert mine.status_code == 200, mine.text
    own = mine.json()["state"]
    assert _stamp(own) == _stamp(stolen)  # what the stamp check alone would have taken for "unchanged"

    poll = screen.path_of_other(screen.poll).format(**ids)
    unchanged = await client.patch(poll, headers={**other.headers, "X-Screen-State": own})
    assert unchanged.status_code == 200 and unchanged.json()["patches"] == []  # the viewer's own token is honoured
    for _ in range(2):  # the second time through the unchanged polls kept in memory, when the first was kept
        replayed = await client.patch(poll, headers={**other.headers, "X-Screen-State": stolen})
        assert replayed.status_code == 200, replayed.text
        answer = replayed.json()
        assert _is_reset(answer), answer["patches"][:3]
        assert answer["patches"][0]["elements"] == mine.json()["elements"]
        assert answer["state"] != stolen


async def test_a_chat_send_with_another_viewers_token_answers_with_the_whole_chat(client, login, demo):
    appointment = aid(demo, REQUESTED)
    doctor, support = await login("doctor1"), await login("support1")
    opened = await client.put(f"/profile/messages/user-chat?appointment-id={appointment}", headers=doctor.headers)
    stolen = opened.json()["state"]
    response = await send(client, support, appointment, "From support", state=stolen)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["patches"][0]["op"] == "reset"
    own = (await send(client, support, appointment, "Again", state=answer["state"])).json()
    assert own["patches"][0]["op"] != "reset"  # the sender's own token still gets a diff
