"""A user's language choice: stored, so pushes and every device follow it (docs/web-app.md#language)."""

from __future__ import annotations

from doctordesk import i18n
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import Text
from doctordesk.runtime import Runtime
from doctordesk.services.accounts.auth import LANGUAGE_CHOSEN
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import User


def check_language(raw: str) -> str:
    language = raw.strip().lower()
    if language not in i18n.LOCALES:
        raise ValidationFailed(fields={"language": Text("One of: {choices}.", choices=", ".join(i18n.LOCALES))})
    return language


async def choose(rt: Runtime, actor: Actor, raw: str) -> str:
    """Store ``actor``'s language; this request and the next ones speak it (other instances within the auth
    cache's few seconds)."""
    language = check_language(raw)
    async with unit_of_work(rt) as uow:
        user = await uow.session.get(User, actor.user_id)
        if user is not None:
            user.language = language
        # Every instance forgets the user's cached actor; the user's open screens render again (their topic).
        uow.emit(DomainEvent(LANGUAGE_CHOSEN, (user_topic(actor.user_id),), {"user_id": actor.user_id}))
    rt.auth_cache.drop_user(actor.user_id)
    i18n.use(language)
    return language
