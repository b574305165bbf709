"""The audit trail as FHIR AuditEvent (docs/fhir.md#auditevent), for admins only, as the audit screen and the
admin API: the same rows and order (``services.audit.trail``: newest first, keyset pages)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from doctordesk.domain.audit import AuditFilter, AuditRow
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.roles import require_admin
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.trail import filtered
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.search import Search, bundle, check
from doctordesk.services.fhir.sorting import SortKey
from doctordesk.store.tables import AuditLog

SEARCH_PARAMETERS = ("date", "entity", "subtype")
# _sort: when recorded (``date``), newest first unless asked; the id breaks ties (index (at, id) of admin_0001).
SORTS = ("date",)
DEFAULT_SORT = (SortKey("date", descending=True),)
_SORT_COLUMNS = {"date": AuditLog.at}
EVENT_TYPE = {"system": "http://dicom.nema.org/resources/ontology/DCM", "code": "110110", "display": "Patient Record"}
ACTION_SYSTEM = "urn:doctordesk:audit-action"
USER_SYSTEM = "urn:doctordesk:user"
_MAX_ACTION = 64


def _admin(caller: Caller) -> None:
    """Only admins read the audit trail; anyone else is 403 (the trail is no secret, its entries are)."""
    require_admin(caller, message=N_("Only admins read the audit trail."))


def event(row: AuditRow) -> dict[str, Any]:
    if row.actor_id is not None:
        who: dict[str, Any] = {"identifier": {"system": USER_SYSTEM, "value": str(row.actor_id)}}
    else:
        who = {"display": "doctordesk (the service or a service account)"}
    what: dict[str, Any] = (
        fhir_mapping.reference("Appointment", row.entity_id)
        if row.entity == "appointment" and row.entity_id is not None
        else {"display": f"{row.entity} {row.entity_id}" if row.entity_id is not None else row.entity}
    )
    return {
        "resourceType": "AuditEvent",
        "id": str(row.id),
        "type": EVENT_TYPE,
        "subtype": [{"system": ACTION_SYSTEM, "code": row.action}],
        "recorded": fhir_mapping.instant(row.at),
        "outcome": "0",
        "agent": [{"who": who, "requestor": True}],
        "source": {"observer": {"display": "doctordesk"}},
        "entity": [
            {
                "what": what,
                "detail": [{"type": "details", "valueString": json.dumps(row.details, sort_keys=True, default=str)}],
            }
        ],
    }


async def read(rt: Runtime, caller: Caller, event_id: int) -> dict[str, Any]:
    _admin(caller)
    async with rt.db.read() as session:
        r = await session.scalar(select(AuditLog).where(AuditLog.id == event_id))
    if r is None:
        raise NotFound(N_("AuditEvent not found."))
    return event(AuditRow(r.id, r.at, r.actor_id, r.action, r.entity, r.entity_id, r.details or {}))


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """Newest first; ``date`` (when recorded), ``entity`` (``Appointment/<id>``), ``subtype`` (the action)."""
    _admin(caller)
    checked = check(request, SEARCH_PARAMETERS, sorts=SORTS, default_sort=DEFAULT_SORT)
    span = fhir_mapping.date_range(checked.params.get("date", []), now=rt.clock.now())
    appointment = None
    entities = fhir_mapping.token_list(checked.params.get("entity", []))
    if len(entities) > 1:
        raise ValidationFailed(fields={"entity": N_("Name one entity: Appointment/<id>.")})
    for value in entities:
        appointment = fhir_mapping.reference_id(value, "Appointment")
        if appointment is None or not value.startswith("Appointment/"):
            raise ValidationFailed(fields={"entity": N_("Use Appointment/<id>.")})
    actions = fhir_mapping.token_list(checked.params.get("subtype", []))
    if len(actions) > 1:
        raise ValidationFailed(fields={"subtype": N_("Name one action.")})
    action = actions[-1].rpartition("|")[2] if actions else None
    if action is not None and not 0 < len(action) <= _MAX_ACTION:
        raise ValidationFailed(fields={"subtype": N_("An audit action, e.g. appointment.approve.")})
    filters = AuditFilter(appointment_id=appointment, action=action, since=span.lo, until=span.hi)
    query = filtered(filters)
    if checked.sort_after is not None:
        query = query.where(sorting.beyond(checked.sort, _SORT_COLUMNS, AuditLog.id, checked.sort_after))
    query = query.order_by(*sorting.order_by(checked.sort, _SORT_COLUMNS, AuditLog.id)).limit(checked.count + 1)
    async with rt.db.read() as session:
        found = (await session.scalars(query)).all()
    rows = [AuditRow(r.id, r.at, r.actor_id, r.action, r.entity, r.entity_id, r.details or {}) for r in found]
    return bundle(
        request,
        checked,
        rows,
        to_resource=event,
        position=lambda r: sorting.encode_cursor(checked.sort, (*(r.at for _ in checked.sort), r.id)),
    )
