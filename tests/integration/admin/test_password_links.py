"""One-time password links (docs/administration.md#one-time-password-links), on SQLite and PostgreSQL: made by an
admin, stored hashed, audited without the token, working once, until they expire, only for active users, and
voided by a newer link."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from doctordesk.services.accounts.password_links import LIFETIME
from doctordesk.store.admin_tables import PasswordLink
from doctordesk.store.tables import AuditLog
from tests.integration.admin_screens.test_user_screens import patched
from tests.support.errors import assert_error
from tests.support.integration import make_key


async def make_link(client, admin, user_id: int) -> str:
    response = await client.post(f"/admin/users/{user_id}/password-link", headers=admin.headers)
    assert response.status_code == 201, response.text
    assert response.headers["cache-control"] == "no-store"
    url = response.json()["url"]
    assert url.startswith("http://testserver/#/set-password/")
    return url.rsplit("/", 1)[1]


async def use(client, token: str, password: str):
    return await client.post("/auth/password-link", data={"token": token, "password": password})


async def signs_in(client, username: str, password: str) -> bool:
    return (await client.post("/auth/login", data={"username": username, "password": password})).status_code == 200


async def test_a_link_sets_the_users_own_password_once_and_signs_them_out(client, login, demo, runtime):
    admin, doctor = await login("admin"), await login("doctor2")
    token = await make_link(client, admin, demo.users["doctor2"])
    async with runtime.db.read() as s:
        link = await s.scalar(select(PasswordLink))
        entries = (await s.scalars(select(AuditLog).where(AuditLog.action.like("%password-link%")))).all()
    assert link.token_hash != token and token not in link.token_hash and link.used_at is None
    assert [e.action for e in entries] == ["admin.password-link-created"]
    assert entries[0].actor_id == demo.users["admin"] and token not in str(entries[0].details)
    assert await signs_in(client, "doctor2", "demo")  # the old password works until the link is used
    done = await use(client, token, "my own secret 1")
    assert done.status_code == 200 and done.json() == {"username": "doctor2"}
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 401  # signed out everywhere
    assert await signs_in(client, "doctor2", "my own secret 1")
    assert not await signs_in(client, "doctor2", "demo")
    again = await use(client, token, "someone else's")
    assert_error(again, 404, "NOT_FOUND")
    assert await signs_in(client, "doctor2", "my own secret 1")  # the second use changed nothing
    async with runtime.db.read() as s:
        used = await s.scalar(select(AuditLog).where(AuditLog.action == "password-link.used"))
    assert used.entity_id == demo.users["doctor2"] and used.details["before"]["used_at"] is None
    assert used.details["after"]["used_at"] and token not in str(used.details)


async def test_an_expired_link_is_refused_and_changes_nothing(client, login, demo, clock):
    admin = await login("admin")
    token = await make_link(client, admin, demo.users["support1"])
    clock.advance(LIFETIME + timedelta(seconds=1))
    assert_error(await use(client, token, "too late at night"), 404, "NOT_FOUND")
    assert await signs_in(client, "support1", "demo")


async def test_a_newer_link_voids_the_older_one(client, login, demo):
    admin = await login("admin")
    old = await make_link(client, admin, demo.users["patient1"])
    new = await make_link(client, admin, demo.users["patient1"])
    assert_error(await use(client, old, "from the old link"), 404, "NOT_FOUND")
    assert (await use(client, new, "from the new link")).status_code == 200
    assert await signs_in(client, "patient1", "from the new link")


async def test_deactivated_users_get_no_link_and_cannot_use_one_made_before(client, login, demo):
    admin = await login("admin")
    user_id = demo.users["doctor3"]
    token = await make_link(client, admin, user_id)
    assert (await client.post(f"/admin/users/{user_id}/deactivate", headers=admin.headers)).status_code == 200
    assert_error(await use(client, token, "while deactivated"), 404, "NOT_FOUND")
    refused = await client.post(f"/admin/users/{user_id}/password-link", headers=admin.headers)
    assert_error(refused, 422, "FIELDS_VALIDATION_ERROR")
    assert "user" in refused.json()["fields"]


async def test_bad_input_is_refused_and_leaves_the_link_usable(client, login, demo):
    admin = await login("admin")
    token = await make_link(client, admin, demo.users["support2"])
    short = await use(client, token, "short")
    assert_error(short, 422, "FIELDS_VALIDATION_ERROR")
    assert "password" in short.json()["fields"]
    control = await use(client, token, "bell\x07ringing")
    assert control.status_code == 422
    assert_error(await use(client, "x" * 129, "long enough pw"), 422, "FIELDS_VALIDATION_ERROR")
    assert_error(await use(client, "not-a-token", "long enough pw"), 404, "NOT_FOUND")
    unknown = await client.post("/admin/users/999999/password-link", headers=admin.headers)
    assert_error(unknown, 404, "NOT_FOUND")
    assert (await use(client, token, "long enough pw")).status_code == 200


async def test_only_admins_make_links_and_the_screen_shows_one_once(client, login, demo, runtime):
    admin = await login("admin")
    user_id = demo.users["doctor1"]
    key = await make_key(client, admin.headers)
    for who in ("doctor1", "support1", "patient1"):
        user = await login(who)
        api = await client.post(f"/admin/users/{user_id}/password-link", headers=user.headers)
        assert_error(api, 403, "FORBIDDEN")
        screen = await client.post(f"/profile/admin/users/{user_id}/password-link", headers=user.headers)
        assert screen.status_code == 404
    assert (await client.post(f"/admin/users/{user_id}/password-link", headers=key.headers)).status_code == 401
    async with runtime.db.read() as s:
        assert (await s.scalars(select(PasswordLink))).all() == []
    url = f"/profile/admin/users/{user_id}"
    page = (await client.put(url, headers=admin.headers)).json()
    shown = await client.post(f"{url}/password-link", headers={**admin.headers, "X-Screen-State": page["state"]})
    assert shown.status_code == 200, shown.text
    text = patched(shown.json(), "new-password")["set"]["value"]
    token = text.split("/#/set-password/")[1].split(" ")[0]
    assert token not in str((await client.put(url, headers=admin.headers)).json())
    assert (await use(client, token, "set from the screen")).status_code == 200
