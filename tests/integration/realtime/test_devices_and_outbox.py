"""Push devices from request headers, and the outbox written in the transaction of the change (SQLite and
PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, doctor_topic
from doctordesk.runtime import Runtime
from doctordesk.services.uow import unit_of_work
from doctordesk.store.realtime_tables import Device, PushOutbox

PHONE = {"X-Device-Id": "phone-1", "X-Push-Platform": "android", "X-Push-Token": "tok-A"}


async def devices(runtime: Runtime) -> list[Device]:
    async with runtime.db.read() as session:
        return list((await session.scalars(select(Device).order_by(Device.id))).all())


async def outbox_count(runtime: Runtime) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(PushOutbox)) or 0)


@pytest.mark.parametrize(
    "headers",
    [
        {**PHONE, "X-Push-Platform": "windows"},
        {**PHONE, "X-Push-Token": "x" * 513},
        {"X-Push-Platform": "ios", "X-Push-Token": "tok"},
        {**PHONE, "X-Device-Id": "d" * 129},
        {**PHONE, "X-Push-Token": ""},
    ],
    ids=["unknown-platform", "oversized-token", "no-device-id", "oversized-device-id", "empty-token"],
)
async def test_bad_push_headers_are_422_and_write_nothing(client, login, runtime, headers) -> None:
    doctor = await login("doctor1")
    response = await client.put("/profile/appointments", headers={**doctor.headers, **headers})
    assert response.status_code == 422
    assert response.json()["code"] == "FIELDS_VALIDATION_ERROR"
    assert await devices(runtime) == []


async def test_push_headers_record_the_device_its_latest_token_and_last_active_user(client, login, runtime) -> None:
    doctor, support = await login("doctor1"), await login("support1")
    assert (await client.put("/profile/appointments", headers={**doctor.headers, **PHONE})).status_code == 200
    [device] = await devices(runtime)
    assert (device.platform, device.push_token, device.user_id) == ("android", "tok-A", doctor.user["id"])
    await client.put("/profile/appointments", headers={**support.headers, **PHONE, "X-Push-Token": "tok-B"})
    [device] = await devices(runtime)
    assert (device.push_token, device.user_id) == ("tok-B", support.user["id"])


async def test_calls_without_push_headers_record_no_device(client, login, runtime) -> None:
    doctor = await login("doctor1")
    assert (await client.put("/profile/appointments", headers=doctor.headers)).status_code == 200
    assert await devices(runtime) == []


async def test_notifications_go_to_the_outbox_in_the_same_transaction_for_the_last_active_user(
    client, login, runtime
) -> None:
    doctor, support = await login("doctor1"), await login("support1")
    await client.put("/profile/appointments", headers={**doctor.headers, **PHONE})
    other_phone = {"X-Device-Id": "phone-2", "X-Push-Platform": "ios", "X-Push-Token": "tok-C"}
    await client.put("/profile/appointments", headers={**support.headers, **other_phone})
    event = DomainEvent(
        EventKind.APPOINTMENTS_IMPORTED, (doctor_topic(doctor.user["id"]),), notify_user_ids=(doctor.user["id"],)
    )
    with pytest.raises(RuntimeError):
        async with unit_of_work(runtime) as uow:
            uow.emit(event)
            raise RuntimeError("the change fails")
    assert await outbox_count(runtime) == 0
    async with unit_of_work(runtime) as uow:
        uow.emit(event)
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(PushOutbox))).all()
    assert [(r.user_id, r.status) for r in rows] == [(doctor.user["id"], "pending")]
    assert rows[0].data == "Timeout"
