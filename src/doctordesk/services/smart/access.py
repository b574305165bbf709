"""A SMART access token at the FHIR interface (docs/smart.md#scopes): the user behind it, and whether its scopes
allow the interaction asked. The scopes are a ceiling over the user's own rights: the actor returned is the user
(their role and ownership rules apply as for their own token), narrowed to the launch's patient where only
``patient/`` scopes allow the interaction.

A backend service's token (``ddst_…``, docs/smart.md#backend-services) stands for no user: its actor is
``system_actor`` — role support (the whole clinic, as support sees it at the FHIR interface), ``user_id`` 0,
``system_client`` its client id and its ``system/`` scopes as the ceiling — and the same scope check applies."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select

from doctordesk.domain.errors import Forbidden, Unauthorized
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import SYSTEM_ACCESS_PREFIX
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.accounts.auth import MAX_TOKEN_CHARS
from doctordesk.services.accounts.sessions import actor_for
from doctordesk.services.smart.authorize import hashed
from doctordesk.services.smart.tokens import ACCESS
from doctordesk.store.smart_tables import SmartClient, SmartSystemToken, SmartToken
from doctordesk.store.tables import User


async def fhir_actor(rt: Runtime, token: str, *, method: str, path: str) -> Actor:
    """The actor a SMART access token stands for at ``method`` ``path`` (after ``/fhir/``): 401 when the token is
    unknown, expired or revoked (or its app deactivated), 403 when no granted scope allows the interaction."""
    if not is_plain_text(token, max_chars=MAX_TOKEN_CHARS):
        raise Unauthorized()
    if token.startswith(SYSTEM_ACCESS_PREFIX):
        return _within_scopes(await system_actor(rt, token), method=method, path=path)
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
    actor = replace(actor, ceiling=smart_scopes.Ceiling(tuple(grant.scope.split()), grant.patient_id))
    return _within_scopes(actor, method=method, path=path)


def _within_scopes(actor: Actor, *, method: str, path: str) -> Actor:
    """``actor`` when its token's scopes (its ceiling) allow the interaction (403 otherwise), narrowed to the
    launch's patient where only ``patient/`` scopes allow it."""
    assert actor.ceiling is not None
    granted, patient_id = actor.ceiling.granted, actor.ceiling.patient_id
    wanted = smart_scopes.interaction(method, path)
    if wanted is None:
        return actor
    if not smart_scopes.permits(granted, wanted):
        raise Forbidden(N_("The token's scopes do not allow this."))
    if patient_id is not None and smart_scopes.patient_only(granted, wanted):
        return replace(actor, patient_context=patient_id)
    return actor


async def system_actor(rt: Runtime, token: str) -> Actor:
    """The actor of a backend service's access token (401 when unknown, expired or revoked, or its service
    deactivated): no user, the whole clinic as support sees it, beneath its ``system/`` scopes."""
    query = (
        select(SmartSystemToken, SmartClient)
        .join(SmartClient, SmartClient.id == SmartSystemToken.client_pk)
        .where(SmartSystemToken.token_hash == hashed(token), SmartClient.active.is_(True))
    )
    async with rt.db.read() as session:
        row = (await session.execute(query)).first()
    if row is None:
        raise Unauthorized()
    grant, client = row
    if grant.revoked_at is not None or grant.expires_at <= rt.clock.now():
        raise Unauthorized(N_("The access token has expired or was revoked."))
    return Actor(
        user_id=0, username=client.client_id, role=Role.SUPPORT, display_name=client.name,
        ceiling=smart_scopes.Ceiling(tuple(grant.scope.split())), system_client=client.client_id,
    )  # fmt: skip
