"""A SMART access token at the FHIR interface (docs/smart.md#scopes): the user behind it, and whether its scopes
allow the interaction asked. The scopes are a ceiling over the user's own rights: the actor returned is the user
(their role and ownership rules apply as for their own token), narrowed to the launch's patient where only
``patient/`` scopes allow the interaction."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select

from doctordesk.domain.errors import Forbidden, Unauthorized
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.roles import Actor
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.accounts.auth import MAX_TOKEN_CHARS
from doctordesk.services.accounts.sessions import actor_for
from doctordesk.services.smart.authorize import hashed
from doctordesk.services.smart.tokens import ACCESS
from doctordesk.store.smart_tables import SmartClient, SmartToken
from doctordesk.store.tables import User


async def fhir_actor(rt: Runtime, token: str, *, method: str, path: str) -> Actor:
    """The actor a SMART access token stands for at ``method`` ``path`` (after ``/fhir/``): 401 when the token is
    unknown, expired or revoked (or its app deactivated), 403 when no granted scope allows the interaction."""
    if not is_plain_text(token, max_chars=MAX_TOKEN_CHARS):
        raise Unauthorized()
    query = (
        select(SmartToken, User)
        .join(User, User.id == SmartToken.user_id)
        .join(SmartClient, SmartClient.id == SmartToken.client_pk)
        .where(SmartToken.token_hash == hashed(token), SmartToken.kind == ACCESS, SmartClient.active.is_(True))
    )
    async with rt.db.read() as session:
        row = (await session.execute(query)).first()
        if row is None:
            raise Unauthorized()
        grant, user = row
        if grant.revoked_at is not None or grant.expires_at <= rt.clock.now() or not user.active:
            raise Unauthorized(N_("The access token has expired or was revoked."))
        actor = await actor_for(session, user, None)
    granted = grant.scope.split()
    actor = replace(actor, ceiling=smart_scopes.Ceiling(tuple(granted), grant.patient_id))
    wanted = smart_scopes.interaction(method, path)
    if wanted is None:
        return actor
    if not smart_scopes.permits(granted, wanted):
        raise Forbidden(N_("The token's scopes do not allow this."))
    if grant.patient_id is not None and smart_scopes.patient_only(granted, wanted):
        return replace(actor, patient_context=grant.patient_id)
    return actor
