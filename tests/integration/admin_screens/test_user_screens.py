"""The administration screens for users and locations (docs/administration.md), on SQLite and PostgreSQL: the
same rules and audit as the JSON API, a new user's page reached at once, deactivation signing the user out, and
nobody but admins reaching them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from doctordesk.screens.protocol import walk
from doctordesk.store.tables import AuditLog, Location, User

USERS = "/profile/admin/users"


def by_id(elements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(elements)}


def patched(update: dict[str, Any], element_id: str) -> dict[str, Any]:
    (patch,) = [p for p in update["patches"] if p.get("id") == element_id]
    return patch


async def test_the_user_list_pages_and_filters_by_role(client, login):
    admin = await login("admin")
    page = (await client.put(USERS, headers=admin.headers)).json()
    rows = [e for e in walk(page["elements"]) if e["id"].startswith("user-") and e["type"] == "Row"]
    assert len(rows) >= 10
    assert by_id(page["elements"])["nav-users"]["highlighted"] is True
    chosen = await client.patch(f"{USERS}/filter", headers=admin.headers, data={"role": "doctor"})
    assert chosen.json()["navigate"] == f"{USERS}?role=doctor"
    doctors = (await client.put(f"{USERS}?role=doctor", headers=admin.headers)).json()
    roles = {e["value"] for e in walk(doctors["elements"]) if e["id"].startswith("user-role-")}
    assert roles == {"Doctor"}
    bad = await client.patch(f"{USERS}/filter", headers=admin.headers, data={"role": "king"})
    assert bad.status_code == 422 and "role" in bad.json()["fields"]


async def test_creating_a_doctor_lands_on_their_page_with_the_one_time_link_and_audits_it(client, login, runtime):
    admin = await login("admin")
    form = {
        "role": "doctor", "username": "drnew", "display_name": "Dr. New", "password": "",
        "specialty": "Cardiology", "timezone": "Europe/Berlin", "can_prescribe": "true", "chat_enabled": "false",
    }  # fmt: skip
    page = (await client.put(f"{USERS}/new", headers=admin.headers)).json()
    created = await client.post(
        f"{USERS}/create", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form
    )
    assert created.status_code == 200, created.text
    async with runtime.db.read() as s:
        user = await s.scalar(select(User).where(User.username == "drnew"))
        audit = await s.scalar(select(AuditLog).where(AuditLog.entity == "user", AuditLog.entity_id == user.id))
    answer = created.json()
    assert answer["navigate"] == f"{USERS}/{user.id}"  # the new user's page, not an empty form
    assert answer["notice"]["text"] == (
        "Created Dr. New (drnew, Doctor). Make a one-time link here so they can set their password."
    )
    shown = by_id((await client.put(answer["navigate"], headers=admin.headers)).json()["elements"])
    assert shown["password-link"].get("visible", True) and shown["toggle-active"]["label"] == "Deactivate"
    assert audit.details["after"]["doctor"]["chat_enabled"] is False
    assert "password" not in str(audit.details)
    dup = await client.post(f"{USERS}/create", headers=admin.headers, data=form)
    assert dup.status_code == 422 and "username" in dup.json()["fields"]


async def test_a_typed_password_is_the_new_users_and_the_notice_says_who_was_created_in_german(client, login):
    admin = await login("admin")
    form = {"role": "support", "username": "kimnew", "display_name": "Kim New", "password": "correct horse"}
    created = await client.post(f"{USERS}/create", headers={**admin.headers, "Accept-Language": "de"}, data=form)
    assert created.status_code == 200, created.text
    assert created.json()["notice"]["text"] == "Kim New angelegt (kimnew, Support-Mitarbeiter)."
    signed_in = await client.post("/auth/login", data={"username": "kimnew", "password": "correct horse"})
    assert signed_in.status_code == 200


async def test_a_bad_form_is_refused_naming_the_fields_and_writes_nothing(client, login, runtime):
    admin = await login("admin")
    async with runtime.db.read() as s:
        before = len((await s.scalars(select(User.id))).all())
    cases = [
        {"role": "emperor", "username": "x", "display_name": "X"},
        {"role": "support", "username": "", "display_name": "X"},
        {"role": "support", "username": "ok", "display_name": "a\x00b"},
        {"role": "doctor", "username": "ok", "display_name": "X", "timezone": "Mars/Base"},
        {"role": "doctor", "username": "ok", "display_name": "X", "can_prescribe": "yes"},
        {"role": "support", "username": "ok", "display_name": "X", "email": "kim@example.org"},  # patients only
    ]
    for form in cases:
        response = await client.post(f"{USERS}/create", headers=admin.headers, data=form)
        assert response.status_code == 422, (form, response.text)
        assert response.json()["fields"]
    async with runtime.db.read() as s:
        assert len((await s.scalars(select(User.id))).all()) == before


async def test_an_admin_edits_a_doctor_resets_a_password_and_deactivates(client, login, demo):
    admin = await login("admin")
    doctor = await login("doctor3")
    url = f"{USERS}/{demo.users['doctor3']}"
    page = (await client.put(url, headers=admin.headers)).json()
    elements = by_id(page["elements"])
    assert elements["can-prescribe"]["type"] == "Checkbox"
    form = {"display_name": "Dr. Renamed", "specialty": "Dermatology", "timezone": "Europe/London",
            "can_prescribe": "false", "chat_enabled": "true"}  # fmt: skip
    saved = await client.post(f"{url}/save", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form)
    assert saved.status_code == 200, saved.text
    assert patched(saved.json(), "saved")["set"]["value"] == "Saved."
    fresh = by_id((await client.put(url, headers=admin.headers)).json()["elements"])
    assert fresh["display-name"]["value"] == "Dr. Renamed" and fresh["can-prescribe"]["value"] is False
    reset = await client.post(f"{url}/password", headers=admin.headers)
    password = patched(reset.json(), "new-password")["set"]["value"].split("New password: ")[1].split(" ")[0]
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 401  # signed out
    relogin = await client.post("/auth/login", data={"username": "doctor3", "password": password})
    assert relogin.status_code == 200
    off = await client.post(f"{url}/deactivate", headers=admin.headers)
    assert off.status_code == 200
    assert (await client.post("/auth/login", data={"username": "doctor3", "password": password})).status_code == 401
    assert by_id((await client.put(url, headers=admin.headers)).json()["elements"])["toggle-active"]["label"] == (
        "Reactivate"
    )
    me = f"{USERS}/{demo.users['admin']}/deactivate"
    assert (await client.post(me, headers=admin.headers)).status_code == 422


async def test_locations_are_added_and_edited_on_the_screen(client, login, runtime):
    admin = await login("admin")
    page = (await client.put("/profile/admin/locations", headers=admin.headers)).json()
    created = await client.post(
        "/profile/admin/locations/create",
        headers={**admin.headers, "X-Screen-State": page["state"]},
        data={"name": "Hamburg", "address": "Jungfernstieg 1", "timezone": "Europe/Berlin"},
    )
    assert created.status_code == 200, created.text
    async with runtime.db.read() as s:
        hamburg = await s.scalar(select(Location).where(Location.name == "Hamburg"))
    assert hamburg is not None and f"location-{hamburg.id}" in str(created.json()["patches"])
    bad = await client.post(
        f"/profile/admin/locations/{hamburg.id}/save", headers=admin.headers, data={"timezone": "Nowhere"}
    )
    assert bad.status_code == 422 and "timezone" in bad.json()["fields"]
    ok = await client.post(f"/profile/admin/locations/{hamburg.id}/save", headers=admin.headers, data={"name": "HH"})
    assert ok.status_code == 200


async def test_only_admins_reach_the_administration_screens(client, login, demo):
    for who in ("doctor1", "support1", "patient1"):
        user = await login(who)
        for url in (USERS, f"{USERS}/new", f"{USERS}/{demo.users['doctor1']}", "/profile/admin/locations"):
            assert (await client.put(url, headers=user.headers)).status_code == 404, (who, url)
        post = await client.post(f"{USERS}/{demo.users['doctor1']}/deactivate", headers=user.headers)
        assert post.status_code == 404
    assert (await client.put(USERS)).status_code == 401
    admin = await login("admin")
    listed = (await client.put("/profile/appointments", headers=admin.headers)).json()
    assert by_id(listed["elements"])["administration"]["action"]["endpoint"] == USERS


async def test_an_email_address_is_refused_on_an_administrators_page(client, login, demo, runtime):
    # Patients have one for their mail, doctors and support one for their notifications (docs/notifications.md);
    # an administrator's page has none.
    admin = await login("admin")
    url = f"{USERS}/{demo.users['admin']}"
    for email in ("admin@example.org", "\x84"):
        refused = await client.post(f"{url}/save", headers=admin.headers, data={"display_name": "X", "email": email})
        assert refused.status_code == 422, refused.text
        assert refused.json()["fields"] == {"email": "Only for patients."}
    async with runtime.db.read() as s:
        assert await s.scalar(select(User.display_name).where(User.id == demo.users["admin"])) != "X"
