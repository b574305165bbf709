"""Chat messages as FHIR Communication and their files as Binary (docs/fhir.md#communication), with the chat's
own rights (``services.chat.access.chat_appointment``: the appointment's doctor, support and admins; patients
403, other doctors 404) and its own file download (``chat.attachment_file``). API keys have no access to the staff
chat."""

from __future__ import annotations

import base64
from typing import Any

from doctordesk.domain.chat.messages import Cursor, MessageView
from doctordesk.domain.errors import Forbidden, NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.chat import access as chat_access
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.search import Search, bundle, check, references
from doctordesk.store import chat_repo

SEARCH_PARAMETERS = ("about",)
USER_SYSTEM = "urn:doctordesk:user"


def _staff(caller: Caller) -> Actor:
    if not isinstance(caller, Actor):
        raise Forbidden(N_("The support chat is the clinic staff's: API keys have no access."))
    return caller


def communication(appointment_id: int, message: MessageView) -> dict[str, Any]:
    sender: dict[str, Any] = (
        fhir_mapping.reference("Practitioner", message.sender_id, message.sender_name)
        if message.sender_role is Role.DOCTOR
        else {"identifier": {"system": USER_SYSTEM, "value": str(message.sender_id)}, "display": message.sender_name}
    )
    payload: list[dict[str, Any]] = []
    if message.content:
        payload.append({"contentString": message.content})
    if message.attachment is not None:
        payload.append(
            {
                "contentReference": {
                    "reference": f"Binary/{message.attachment.id}",
                    "display": message.attachment.filename,
                }
            }
        )
    body: dict[str, Any] = {
        "resourceType": "Communication",
        "id": str(message.id),
        "status": "completed",
        "about": [fhir_mapping.reference("Appointment", appointment_id)],
        "sent": fhir_mapping.instant(message.created_at),
        "sender": sender,
    }
    if payload:
        body["payload"] = payload
    return body


async def read(rt: Runtime, caller: Caller, message_id: int) -> dict[str, Any]:
    actor = _staff(caller)
    async with rt.db.read() as session:
        found = await chat_repo.message(session, message_id)
        if found is None:
            raise NotFound(N_("Communication not found."))
        try:
            await chat_access.chat_appointment(session, actor, found[1])
        except NotFound:
            raise NotFound(N_("Communication not found.")) from None
    return communication(found[1], found[0])


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The messages of one appointment's thread (``about=Appointment/<id>``, required), newest first, keyset
    pages (``_count``)."""
    actor = _staff(caller)
    checked = check(request, SEARCH_PARAMETERS)
    about = references(checked, "about", "Appointment")
    if not about or len(about) != 1:
        raise ValidationFailed(fields={"about": N_("Name one appointment: Appointment/<id>.")})
    appointment_id = about[0]
    async with rt.db.read() as session:
        await chat_access.chat_appointment(session, actor, appointment_id)
        thread_id = await chat_repo.thread_id_for(session, appointment_id)
        views: list[MessageView] = []
        more = False
        if thread_id is not None:
            if checked.after is None:
                views, more = await chat_repo.latest(session, thread_id, checked.count)
            else:
                before = Cursor(checked.after.at, checked.after.id)
                views, more = await chat_repo.older(session, thread_id, before, checked.count)
    rows: list[MessageView | None] = [*reversed(views), *([None] if more else [])]
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda m: communication(appointment_id, m),
        position=lambda m: Position(m.created_at, m.id),
    )


async def binary(rt: Runtime, caller: Caller, attachment_id: int) -> tuple[dict[str, Any], chat_access.StoredFile]:
    """A message's file, by the chat download's own checks: the Binary resource and the file itself."""
    file = await chat_access.attachment_file(rt, _staff(caller), attachment_id)
    resource = {
        "resourceType": "Binary",
        "id": str(attachment_id),
        "contentType": file.mime,
        "data": base64.b64encode(file.data).decode(),
    }
    return resource, file
