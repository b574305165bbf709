"""The apps a user allowed, on their security page (docs/smart.md#connected-apps): listed with what they may do,
and revoked there — the app's access token is refused at once and its refresh token is invalid_grant; another
app of the user, and the same app's grants of other users, keep working (SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.store.tables import AuditLog
from tests.integration.smart.test_recovery_ends_every_way_in import app_tokens, fhir_status
from tests.support.errors import assert_error
from tests.support.review import find

PAGE = "/profile/security"


async def test_revoking_an_app_ends_its_access_and_refresh_tokens_only(client, login, register, launch, runtime):
    portal, portal_refresh = await app_tokens(client, register, launch)
    diary, _diary_refresh = await app_tokens(client, register, launch, name="Diary")
    patient = await login("patient1")
    elements = (await client.put(PAGE, headers=patient.headers)).json()["elements"]
    apps = find(elements, "apps")["children"]
    names = [find(a["children"], f"{a['id']}-name")["value"] for a in apps if a["type"] == "Row"]
    assert names == ["Diary", "Patient portal"]
    portal_row = next(a for a in apps if a["type"] == "Row" and a["label"] == "Patient portal")
    assert "patient/Appointment.rs" in find(portal_row["children"], f"{portal_row['id']}-scopes")["value"]

    revoke = find(portal_row["children"], f"revoke-{portal_row['id']}")
    answer = await client.post(revoke["action"]["endpoint"], headers=patient.headers)
    assert answer.status_code == 200, answer.text
    assert await fhir_status(client, portal) == 401
    refused = await client.post("/oauth/token", data=portal_refresh)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert await fhir_status(client, diary) == 200
    after = (await client.put(PAGE, headers=patient.headers)).json()["elements"]
    assert [a["label"] for a in find(after, "apps")["children"] if a["type"] == "Row"] == ["Diary"]
    async with runtime.db.read() as session:
        done = list(await session.scalars(select(AuditLog.action).where(AuditLog.action == "smart.grant-revoked")))
    assert done == ["smart.grant-revoked"]


async def test_another_users_app_is_not_found_and_stays(client, login, register, launch):
    portal, _refresh = await app_tokens(client, register, launch)
    elements = (await client.put(PAGE, headers=(await login("patient1")).headers)).json()["elements"]
    endpoint = next(a for a in find(elements, "apps")["children"] if a["type"] == "Row")["id"].replace("app-", "")
    doctor = await login("doctor1")
    assert_error(await client.post(f"{PAGE}/apps/{endpoint}/revoke", headers=doctor.headers), 404, "NOT_FOUND")
    assert await fhir_status(client, portal) == 200
