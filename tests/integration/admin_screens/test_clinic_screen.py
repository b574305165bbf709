"""The clinic's settings (docs/administration.md#clinic-settings), on SQLite and PostgreSQL: the screen and the JSON
API show the defaults (the hours from the server's setting), save a change audited with its values before and
after, refuse bad values naming the field and writing nothing, speak German, and are the admins' only."""

from __future__ import annotations

from sqlalchemy import func, select

from doctordesk.screens.protocol import walk
from doctordesk.store.admin_tables import ClinicSetting
from doctordesk.store.tables import AuditLog

SCREEN = "/profile/admin/clinic"
DEFAULTS = {
    "reminders_enabled": True, "reminder_hours": [24, 2], "quiet_begin": "21:00", "quiet_end": "08:00",
    "waitlist_mode": "one-at-a-time", "waitlist_offer_minutes": 30, "waitlist_direct_move": False,
}  # fmt: skip


def by_id(page):
    return {e["id"]: e for e in walk(page["elements"])}


async def stored(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(ClinicSetting)) or 0)


async def test_the_screen_shows_the_defaults_and_saves_a_change_that_is_audited(client, login, runtime):
    admin = await login("admin")
    page = (await client.put(SCREEN, headers=admin.headers)).json()
    shown = by_id(page)
    assert shown["nav-clinic"]["highlighted"] is True and shown["title"]["value"] == "Clinic"
    assert shown["reminders-enabled"]["value"] is True and shown["reminder-hours"]["value"] == "24,2"
    assert (shown["quiet-begin"]["value"], shown["quiet-end"]["value"]) == ("21:00", "08:00")
    form = {"reminders_enabled": "true", "reminder_hours": "2, 48", "quiet_begin": "22:00", "quiet_end": "07:00"}
    saved = await client.post(f"{SCREEN}/save", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form)
    assert saved.status_code == 200, saved.text
    assert (await client.get("/admin/clinic", headers=admin.headers)).json() == {
        **DEFAULTS, "reminders_enabled": True, "reminder_hours": [48, 2], "quiet_begin": "22:00", "quiet_end": "07:00",
    }  # fmt: skip
    async with runtime.db.read() as s:
        [entry] = (await s.scalars(select(AuditLog).where(AuditLog.action == "admin.clinic-settings-changed"))).all()
    assert entry.details["before"] == {"reminder_hours": "24,2", "quiet_begin": "21:00", "quiet_end": "08:00"}
    assert entry.details["after"] == {"reminder_hours": "48,2", "quiet_begin": "22:00", "quiet_end": "07:00"}
    again = await client.post(f"{SCREEN}/save", headers=admin.headers, data=form)  # nothing changes: no entry
    assert again.status_code == 200
    async with runtime.db.read() as s:
        count = await s.scalar(select(func.count()).where(AuditLog.action == "admin.clinic-settings-changed"))
    assert count == 1


async def test_the_json_api_changes_only_what_it_names(client, login):
    admin = await login("admin")
    assert (await client.get("/admin/clinic", headers=admin.headers)).json() == DEFAULTS
    changed = await client.put("/admin/clinic", headers=admin.headers, json={"reminders_enabled": False})
    assert changed.status_code == 200 and changed.json() == {**DEFAULTS, "reminders_enabled": False}
    none = await client.put("/admin/clinic", headers=admin.headers, json={"quiet_begin": "", "quiet_end": ""})
    assert none.json()["quiet_begin"] == "" and none.json()["quiet_end"] == ""


async def test_bad_values_are_refused_naming_the_field_and_nothing_is_written(client, login, runtime):
    admin = await login("admin")
    for form, field in (
        ({"reminder_hours": "24,0"}, "reminder_hours"),
        ({"reminder_hours": "every day"}, "reminder_hours"),
        ({"quiet_begin": "25:00"}, "quiet_begin"),
        ({"quiet_begin": ""}, "quiet_begin"),  # the end stays: both or neither
        ({"reminders_enabled": "maybe"}, "reminders_enabled"),
        ({"waitlist_mode": "first-come"}, "waitlist_mode"),
        ({"waitlist_offer_minutes": "0"}, "waitlist_offer_minutes"),
        ({"waitlist_offer_minutes": "1441"}, "waitlist_offer_minutes"),
        ({"waitlist_offer_minutes": "٣٠"}, "waitlist_offer_minutes"),  # digits, but not ASCII ones
        ({"waitlist_direct_move": "yes"}, "waitlist_direct_move"),
    ):
        refused = await client.post(f"{SCREEN}/save", headers=admin.headers, data=form)
        assert refused.status_code == 422, (form, refused.text)
        assert set(refused.json()["fields"]) == {field}, form
    for body in (
        {"reminder_hours": [0]}, {"reminder_hours": []}, {"quiet_end": "8:00"}, {"unknown": 1},
        {"waitlist_mode": "first-come"}, {"waitlist_offer_minutes": 0}, {"waitlist_direct_move": "yes"},
    ):  # fmt: skip
        refused = await client.put("/admin/clinic", headers=admin.headers, json=body)
        assert refused.status_code == 422, (body, refused.text)
    both = await client.put("/admin/clinic", headers=admin.headers, json={"quiet_end": ""})
    assert both.status_code == 422 and set(both.json()["fields"]) == {"quiet_end"}
    assert await stored(runtime) == 0


async def test_the_screen_speaks_german(client, login):
    admin = await login("admin")
    page = (await client.put(SCREEN, headers={**admin.headers, "Accept-Language": "de"})).json()
    shown = by_id(page)
    assert shown["title"]["value"] == "Praxis" and shown["reminders"]["label"] == "Erinnerungen"
    refused = await client.post(
        f"{SCREEN}/save", headers={**admin.headers, "Accept-Language": "de"}, data={"reminder_hours": "0"}
    )
    assert refused.json()["fields"]["reminder_hours"].startswith("Ganze Stunden")


async def test_only_admins_see_or_change_the_settings(client, login):
    doctor = await login("doctor1")
    assert (await client.put(SCREEN, headers=doctor.headers)).status_code == 404
    assert (
        await client.post(f"{SCREEN}/save", headers=doctor.headers, data={"reminder_hours": "3"})
    ).status_code == 404
    assert (await client.get("/admin/clinic", headers=doctor.headers)).status_code == 403
    assert (await client.put("/admin/clinic", headers=doctor.headers, json={})).status_code == 403
    assert (await client.get("/admin/clinic")).status_code == 401


async def test_the_waitlist_policy_defaults_to_the_servers_settings_and_is_saved_on_its_own_form(client, login):
    admin = await login("admin")
    page = (await client.put(SCREEN, headers=admin.headers)).json()
    shown = by_id(page)
    assert shown["waitlist-mode"]["value"] == "one-at-a-time"
    assert [o["value"] for o in shown["waitlist-mode"]["options"]] == ["one-at-a-time", "all-at-once"]
    assert shown["waitlist-offer-minutes"]["value"] == "30" and shown["waitlist-direct-move"]["value"] is False
    assert shown["save-waitlist"]["action"]["form"] == "waitlist"
    form = {"waitlist_mode": "all-at-once", "waitlist_offer_minutes": "15", "waitlist_direct_move": "true"}
    saved = await client.post(f"{SCREEN}/save", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form)
    assert saved.status_code == 200, saved.text
    assert (await client.get("/admin/clinic", headers=admin.headers)).json() == {
        **DEFAULTS, "waitlist_mode": "all-at-once", "waitlist_offer_minutes": 15, "waitlist_direct_move": True,
    }  # fmt: skip
