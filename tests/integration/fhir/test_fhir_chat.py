"""Chat messages as Communication and their files as Binary, with the chat's own rights and download safety
(SQLite and PostgreSQL)."""

from __future__ import annotations

import base64

import pytest

from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key

CONVERSATION = 2  # demo.appointments[2]: doctor1 and support1, four messages, a PDF in the third


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def messages(client, headers, appointment_id, count=50):
    url: str | None = f"/fhir/Communication?about=Appointment/{appointment_id}&_count={count}"
    seen = []
    while url:
        page = resource_of(await client.get(url.removeprefix("http://testserver"), headers=headers))
        seen.extend(entries(page))
        url = next_link(page)
    return seen


async def test_a_thread_reads_as_communications_newest_first_in_keyset_pages(client, login, demo):
    doctor = await login("doctor1")
    a = demo.appointments[CONVERSATION]
    walked = await messages(client, doctor.headers, a, count=3)
    assert len(walked) == 4 and len({m["id"] for m in walked}) == 4
    assert [m["sent"] for m in walked] == sorted((m["sent"] for m in walked), reverse=True)
    assert walked[-1]["sender"]["reference"] == f"Practitioner/{demo.users['doctor1']}"
    assert all(m["about"] == [{"reference": f"Appointment/{a}"}] for m in walked)
    one = resource_of(await client.get(f"/fhir/Communication/{walked[0]['id']}", headers=doctor.headers))
    assert one == walked[0]


async def test_an_attachment_is_a_binary_reference_downloaded_with_the_chats_safety(client, login, demo):
    support = await login("support1")
    walked = await messages(client, support.headers, demo.appointments[CONVERSATION])
    (ref,) = [p["contentReference"] for m in walked for p in m.get("payload", []) if "contentReference" in p]
    raw = await client.get(f"/fhir/{ref['reference']}", headers=support.headers)
    assert raw.status_code == 200 and raw.headers["content-type"] == "application/pdf"
    assert raw.headers["x-content-type-options"] == "nosniff"
    assert raw.headers["content-disposition"].startswith("attachment")
    assert raw.content.startswith(b"%PDF")
    as_json = await client.get(
        f"/fhir/{ref['reference']}", headers={**support.headers, "Accept": "application/fhir+json"}
    )
    binary = resource_of(as_json)
    assert base64.b64decode(binary["data"]) == raw.content and binary["contentType"] == "application/pdf"


async def test_other_doctors_patients_and_api_keys_do_not_read_the_chat(client, login, key, demo):
    a = demo.appointments[CONVERSATION]
    doctor = await login("doctor1")
    walked = await messages(client, doctor.headers, a)
    binary = next(
        p["contentReference"]["reference"] for m in walked for p in m.get("payload", []) if "contentReference" in p
    )
    other, patient = await login("doctor2"), await login("patient1")
    for path in (
        f"/fhir/Communication?about=Appointment/{a}",
        f"/fhir/Communication/{walked[0]['id']}",
        f"/fhir/{binary}",
    ):
        assert_outcome(await client.get(path, headers=other.headers), 404, "NOT_FOUND")
        assert_outcome(await client.get(path, headers=patient.headers), 403, "FORBIDDEN")
        assert_outcome(await client.get(path, headers=key.headers), 403, "FORBIDDEN")


async def test_a_communication_search_needs_one_appointment(client, login):
    doctor = await login("doctor1")
    assert_outcome(await client.get("/fhir/Communication", headers=doctor.headers), 400, "FIELDS_VALIDATION_ERROR")
