"""EHR launch (docs/smart.md#ehr-launch): a record system (by its API key) or an admin asks for a ``launch`` value
for one app and one patient; the app's authorization request names it with the ``launch`` scope, and the grant
then has that patient in context (the token answer's ``patient``). A value is opaque, stored hashed, valid for
``LAUNCH_LIFETIME`` and spent by the first authorization request that names it, whatever comes of that request."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import errors as oauth
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import Forbidden, ValidationFailed
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.integration import key_hash as hashed  # SHA-256, as the authorization's own secrets
from doctordesk.domain.roles import Actor, require_admin
from doctordesk.domain.smart.clients import LAUNCH_PREFIX, ClientKind
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartClient, SmartLaunch
from doctordesk.store.tables import Patient

LAUNCH_LIFETIME = timedelta(minutes=5)
MAX_LAUNCH_CHARS = 100


@dataclass(frozen=True, slots=True)
class Issued:
    """A launch value, with the FHIR base the app is launched against (``iss``) and, when the app registered its
    launch URL, that URL with ``iss`` and ``launch`` added (where the record system sends the browser)."""

    launch: str
    iss: str
    expires_in: int
    launch_url: str | None


def _require_issuer(caller: Actor | Integration) -> None:
    """An admin, or a record system's API key that may read every patient (``appointments:read``)."""
    if isinstance(caller, Integration):
        if not caller.has(Scope.APPOINTMENTS_READ):
            raise Forbidden(N_("This API key lacks the scope appointments:read."))
    else:
        require_admin(caller)


async def issue(rt: Runtime, caller: Actor | Integration, *, client_id: str, patient: int, fhir_base: str) -> Issued:
    """A new launch value for the app ``client_id`` (not a backend service) and the patient ``patient``; audited
    ``smart.launch``."""
    _require_issuer(caller)
    now = rt.clock.now()
    value = LAUNCH_PREFIX + secrets.token_urlsafe(32)
    async with unit_of_work(rt) as uow:
        client = await uow.session.scalar(select(SmartClient).where(SmartClient.client_id == client_id))
        fields: dict[str, str] = {}
        if client is None or not client.active or client.kind == ClientKind.BACKEND:
            fields["client_id"] = N_("No active app has this client id.")
        if await uow.session.get(Patient, patient) is None:
            fields["patient"] = N_("No such patient.")
        if fields or client is None:
            raise ValidationFailed(fields=fields)
        row = SmartLaunch(
            launch_hash=hashed(value), client_pk=client.id, patient_id=patient, created_at=now,
            expires_at=now + LAUNCH_LIFETIME, issued_by_user=caller.user_id if isinstance(caller, Actor) else None,
            issued_by_account=caller.service_account_id if isinstance(caller, Integration) else None,
        )  # fmt: skip
        uow.session.add(row)
        by = caller.audit_details() if isinstance(caller, Integration) else {}
        audit(
            uow.session, at=now, actor_id=caller.user_id if isinstance(caller, Actor) else None,
            action="smart.launch", entity="smart_client", entity_id=client.id,
            details={"client_id": client.client_id, "patient": patient, **by},
        )  # fmt: skip
        launch_url = client.launch_url
    if launch_url:
        launch_url = str(add_params_to_uri(launch_url, [("iss", fhir_base), ("launch", value)]))
    return Issued(value, fhir_base, int(LAUNCH_LIFETIME.total_seconds()), launch_url)


async def redeem(session: AsyncSession, rt: Runtime, value: str, client: SmartClient) -> int:
    """Spend the launch value ``value`` for ``client`` (inside the authorization request's transaction): its
    patient. An unknown, used or expired value, or another app's, is ``invalid_request``."""
    refused = oauth.InvalidRequestError("The launch value is unknown, already used or expired.")
    if not value.startswith(LAUNCH_PREFIX) or not is_plain_text(value, max_chars=MAX_LAUNCH_CHARS):
        raise refused
    row = await session.scalar(select(SmartLaunch).where(SmartLaunch.launch_hash == hashed(value)).with_for_update())
    if row is None or row.client_pk != client.id or row.used_at is not None or row.expires_at <= rt.clock.now():
        raise refused
    row.used_at = rt.clock.now()
    return row.patient_id
