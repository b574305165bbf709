"""The administration's mail screen (``screens/admin/mail.py``): read only, admins only."""

from __future__ import annotations

from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import mail as screen
from doctordesk.screens.protocol import Layout, Page
from doctordesk.screens.viewing import Viewing
from doctordesk.services.mail.log import mail_log
from doctordesk.services.screen_base import viewing


def mail_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        not_sent, latest = await mail_log(rt, limit=screen.LOG_SIZE)
        return screen.render(not_sent, latest, layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(
        rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id,
        shows_clinic=False,  # mails: no reference data
    )  # fmt: skip
