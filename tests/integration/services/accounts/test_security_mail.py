"""The Notifications section of one's own security page (docs/notifications.md#staff-mail), on SQLite and
PostgreSQL: doctors and support see it with their stored choice, save an address (normalized) and kinds, a wrong
address is the field's error and writes nothing; a patient or an admin has no section and is refused (404); the
door asks for a recent authentication like every change on the page."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from doctordesk.services.accounts import staff_mail
from doctordesk.services.accounts.staff_mail import StaffMail
from doctordesk.store.mail_tables import StaffMailSetting
from tests.integration.services.accounts.test_recent_authentication import STALE
from tests.support.errors import assert_error
from tests.support.review import find

PAGE = "/profile/security"
SAVE = "/profile/security/mail"


async def _open(client, who) -> dict:
    page = await client.put(PAGE, headers=who.headers)
    assert page.status_code == 200, page.text
    return page.json()


async def _settings(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(StaffMailSetting)) or 0)


@pytest.mark.parametrize("username", ["doctor1", "support1"])
async def test_staff_save_their_address_and_choices_and_see_them_again(client, login, runtime, username):
    me = await login(username)
    page = await _open(client, me)
    assert find(page["elements"], "mail-email")["value"] == ""
    form = {"email": " Me@Clinic.EXAMPLE ", "new_request": "true", "canceled_by_patient": "false"}
    saved = await client.post(SAVE, data=form, headers={**me.headers, "X-Screen-State": page["state"]})
    assert saved.status_code == 200, saved.text
    assert await staff_mail.read(runtime, me.user["id"]) == StaffMail("Me@clinic.example", True, False)
    again = await _open(client, me)
    assert find(again["elements"], "mail-email")["value"] == "Me@clinic.example"
    assert find(again["elements"], "mail-new-request")["value"] is True
    assert find(again["elements"], "mail-canceled")["value"] is False


async def test_a_wrong_address_is_the_fields_error_and_nothing_is_written(client, login, runtime):
    me = await login("doctor1")
    page = await _open(client, me)
    answer = await client.post(SAVE, data={"email": "not an address", "new_request": "true"},
                               headers={**me.headers, "X-Screen-State": page["state"]})  # fmt: skip
    assert "email" in assert_error(answer, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    flag = await client.post(SAVE, data={"email": "", "new_request": "yes"}, headers=me.headers)
    assert "new_request" in assert_error(flag, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await _settings(runtime) == 0


@pytest.mark.parametrize("username", ["patient1", "admin"])
async def test_patients_and_admins_have_no_section_and_are_refused(client, login, runtime, username):
    me = await login(username)
    page = await _open(client, me)
    assert find(page["elements"], "notifications") is None
    answer = await client.post(SAVE, data={"email": "x@example.org", "new_request": "true"}, headers=me.headers)
    assert_error(answer, 404, "NOT_FOUND")
    assert await _settings(runtime) == 0


async def test_saving_needs_a_recent_authentication(client, login, runtime, clock):
    me = await login("doctor1")
    clock.advance(STALE)
    answer = await client.post(SAVE, data={"email": "x@example.org", "new_request": "true"}, headers=me.headers)
    assert_error(answer, 403, "REAUTHENTICATION_REQUIRED")
    assert await _settings(runtime) == 0


async def test_an_admin_sets_a_doctors_address_on_their_page_and_their_choices_stay_theirs(
    client, login, demo, runtime
):
    doctor = await login("doctor1")
    page = await _open(client, doctor)
    form = {"email": "old@example.org", "new_request": "true", "canceled_by_patient": "true"}
    saved = await client.post(SAVE, data=form, headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert saved.status_code == 200, saved.text
    admin = await login("admin")
    user = demo.users["doctor1"]
    shown = await client.put(f"/profile/admin/users/{user}", headers=admin.headers)
    assert find(shown.json()["elements"], "email")["value"] == "old@example.org"
    name = find(shown.json()["elements"], "display-name")["value"]
    wrong = await client.post(f"/profile/admin/users/{user}/save", headers=admin.headers,
                              data={"display_name": name, "email": "not an address"})  # fmt: skip
    assert "email" in assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert (await staff_mail.read(runtime, user)).email == "old@example.org"
    ok = await client.post(f"/profile/admin/users/{user}/save", headers=admin.headers,
                           data={"display_name": name, "email": "New@Example.ORG"})  # fmt: skip
    assert ok.status_code == 200, ok.text
    assert await staff_mail.read(runtime, user) == StaffMail("New@example.org", True, True)


async def test_an_admins_own_page_still_refuses_an_address(client, login, demo):
    admin = await login("admin")
    me = demo.users["admin"]
    shown = await client.put(f"/profile/admin/users/{me}", headers=admin.headers)
    assert find(shown.json()["elements"], "email") is None
    name = find(shown.json()["elements"], "display-name")["value"]
    refused = await client.post(f"/profile/admin/users/{me}/save", headers=admin.headers,
                                data={"display_name": name, "email": "me@example.org"})  # fmt: skip
    assert assert_error(refused, 422, "FIELDS_VALIDATION_ERROR")["fields"]["email"] == "Only for patients."
