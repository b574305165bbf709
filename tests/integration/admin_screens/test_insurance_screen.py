"""The insurance administration screen (docs/administration.md), on SQLite and PostgreSQL: a patient's policies
with their coverage, network membership and exclusions, added and edited through the JSON API's service (same
checks, audit with before and after), and nobody but admins reaching it."""

from __future__ import annotations

from sqlalchemy import func, select

from doctordesk.store.tables import AuditLog, InsurancePolicy
from tests.integration.admin.test_admin_policies import decide
from tests.integration.admin_screens.test_user_screens import by_id, patched
from tests.support.errors import assert_error
from tests.support.integration import make_key
from tests.support.review import REQUESTED, aid

INSURANCE = "/profile/admin/insurance"


async def policy_count(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(InsurancePolicy)) or 0)


def policy_form(demo, **extra: str) -> dict[str, str]:
    return {
        "patient": str(demo.patients["patient1"]), "insurer": "Nord Kasse", "policy_number": "NK-1",
        "valid_from": "2026-01-01", "valid_to": "2027-12-31", f"network_doctor~{demo.users['doctor1']}": "true",
        f"network_doctor~{demo.users['doctor2']}": "false", "excluded_services": "teledermatology, massage",
        f"excluded_doctor~{demo.users['doctor3']}": "true", "third_party_data": "", **extra,
    }  # fmt: skip


async def test_a_policy_is_added_with_network_and_exclusions_then_its_coverage_ended(client, login, demo, runtime):
    admin = await login("admin")
    url = f"{INSURANCE}?patient={demo.patients['patient1']}"
    page = (await client.put(url, headers=admin.headers)).json()
    shown = by_id(page["elements"])
    assert shown["nav-insurance"]["highlighted"] is True and shown["patient"]["value"] == str(demo.patients["patient1"])
    assert "Hansa Health" in shown["insurers"]["value"]
    created = await client.post(
        f"{INSURANCE}/create", headers={**admin.headers, "X-Screen-State": page["state"]}, data=policy_form(demo)
    )
    assert created.status_code == 200, created.text
    assert patched(created.json(), "saved")["set"]["value"] == "Added Nord Kasse NK-1."
    async with runtime.db.read() as s:
        policy = await s.scalar(select(InsurancePolicy).where(InsurancePolicy.insurer == "Nord Kasse"))
    assert policy.network == {"doctors": [demo.users["doctor1"]], "locations": []}
    assert policy.exclusions == {"services": ["massage", "teledermatology"], "doctors": [demo.users["doctor3"]]}
    card = by_id((await client.put(url, headers=admin.headers)).json()["elements"])
    prefix = f"policy-{policy.id}-"
    assert card[f"{prefix}network_doctor-{demo.users['doctor1']}"]["value"] is True
    assert card[f"{prefix}to"]["value"] == "2027-12-31"
    ended = policy_form(demo, valid_to="2026-11-30", third_party_data='{"member": "x"}')
    saved = await client.post(f"{INSURANCE}/policies/{policy.id}/save", headers=admin.headers, data=ended)
    assert saved.status_code == 200, saved.text
    async with runtime.db.read() as s:
        written = select(AuditLog).where(AuditLog.entity == "policy", AuditLog.entity_id == policy.id)
        entries = (await s.scalars(written.order_by(AuditLog.id))).all()
    assert [e.action for e in entries] == ["admin.policy-created", "admin.policy-updated"]
    assert entries[1].details["before"]["valid_to"] == "2027-12-31"
    assert entries[1].details["after"]["valid_to"] == "2026-11-30"
    assert entries[1].details["after"]["third_party_data"] == '{"member": "x"}'
    chosen = await client.patch(f"{INSURANCE}/choose", headers=admin.headers, data={"patient": "5"})
    assert chosen.json()["navigate"] == f"{INSURANCE}?patient=5"


async def test_a_bad_policy_form_names_the_fields_and_writes_nothing(client, login, demo, runtime):
    admin = await login("admin")
    before = await policy_count(runtime)
    tick = f"excluded_doctor~{demo.users['doctor1']}"
    cases = [
        (policy_form(demo, valid_to="2025-01-01"), "valid_to"),
        (policy_form(demo, valid_from="01.01.2026"), "valid_from"),
        (policy_form(demo, insurer=""), "insurer"),
        (policy_form(demo, **{"network_doctor~999999": "true"}), "network.doctors"),
        (policy_form(demo, **{"network_location~x": "true"}), "network_location~x"),
        (policy_form(demo, **{tick: "yes"}), tick),
        (policy_form(demo, patient=""), "patient"),
    ]  # fmt: skip
    for form, field in cases:
        response = await client.post(f"{INSURANCE}/create", headers=admin.headers, data=form)
        assert response.status_code == 422, (form, response.text)
        assert field in response.json()["fields"], (form, response.json())
    unknown = await client.post(f"{INSURANCE}/create", headers=admin.headers, data=policy_form(demo, patient="999999"))
    assert unknown.status_code == 404
    assert await policy_count(runtime) == before


async def test_only_admins_reach_the_insurance_screen(client, login, demo, runtime):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    async with runtime.db.read() as s:
        policy_id = await s.scalar(select(InsurancePolicy.id))
    posts = ((f"{INSURANCE}/create", policy_form(demo)), (f"{INSURANCE}/policies/{policy_id}/save", policy_form(demo)))
    before = await policy_count(runtime)
    for who in ("doctor1", "support1", "patient1"):
        user = await login(who)
        assert (await client.put(INSURANCE, headers=user.headers)).status_code == 404
        assert (
            await client.patch(f"{INSURANCE}/choose", headers=user.headers, data={"patient": "1"})
        ).status_code == 404
        for url, form in posts:
            assert (await client.post(url, headers=user.headers, data=form)).status_code == 404, (who, url)
    assert (await client.put(INSURANCE, headers=key.headers)).status_code == 401
    for url, form in posts:
        assert (await client.post(url, headers=key.headers, data=form)).status_code == 401
    assert await policy_count(runtime) == before
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(AuditLog).where(AuditLog.entity == "policy")) == 0


async def test_edits_on_the_screen_drive_the_coverage_rules_of_review_and_approve(client, login, demo):
    admin, doctor = await login("admin"), await login("doctor1")
    a = aid(demo, REQUESTED)
    [policy] = (
        await client.get(f"/admin/patients/{demo.patients['patient1']}/policies", headers=admin.headers)
    ).json()["policies"]
    save = f"{INSURANCE}/policies/{policy['id']}/save"
    kept = {"patient": str(demo.patients["patient1"]), "insurer": policy["insurer"],
            "policy_number": policy["policy_number"], "third_party_data": policy["third_party_data"] or ""}  # fmt: skip
    ended = {**kept, "valid_from": "2020-01-01", "valid_to": "2021-01-01"}
    assert (await client.post(save, headers=admin.headers, data=ended)).status_code == 200
    assert_error(await decide(client, doctor.headers, a), 422, "APPOINTMENT_DATE_NOT_COVERED")
    covered = {**kept, "valid_from": "2020-01-01", "valid_to": "2030-01-01"}
    forbidding = {**covered, f"excluded_doctor~{demo.users['doctor1']}": "true"}
    assert (await client.post(save, headers=admin.headers, data=forbidding)).status_code == 200
    assert_error(await decide(client, doctor.headers, a), 422, "FORBIDDEN_DUE_TO_POLICY_TERMS")
    broken = {**covered, "third_party_data": '{"member_id": '}
    assert (await client.post(save, headers=admin.headers, data=broken)).status_code == 200
    assert_error(await decide(client, doctor.headers, a), 422, "THIRD_PARTY_DATA_INVALID")
