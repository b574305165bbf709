"""The calendar feed screen (``screens/calendar_feed.py``): its page and poll, and Create/Rotate and Revoke, each
calling the same service as the JSON API (``calendar_feeds``), so the rules and the audit are the same. Doctors
only; anyone else gets 404, as for a screen that is not theirs."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.domain.calendar_feed import feed_topic
from doctordesk.domain.errors import NotFound
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens import calendar_feed as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.state import Shown, Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.services.calendar import feeds as calendar_feeds
from doctordesk.store.tables import DoctorProfile


def viewing(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    """The screen as the doctor ``actor`` sees it: it changes with the doctor's feed topic."""
    if actor.role is not Role.DOCTOR:
        raise NotFound(N_("Screen not found."))

    async def render() -> Page:
        feed = await calendar_feeds.feed_status(rt, actor)
        async with rt.db.read() as session:
            zone = await session.scalar(select(DoctorProfile.timezone).where(DoctorProfile.user_id == actor.user_id))
        # The doctor's own zone when their profile has one, else UTC (said in the times shown).
        return screen.render(feed, timezone=zone or "UTC", layout=layout, timeout=rt.settings.poll_default_seconds)

    shown = Shown(screen.SCREEN, screen.ENDPOINT, (feed_topic(actor.user_id),))
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, rt.settings.poll_default_seconds, render)


async def make(rt: Runtime, actor: Actor, *, base_url: str, page: Viewing, state: str | None) -> UpdateSet:
    """Create or rotate the address; the answer shows the new address this once."""
    new = await calendar_feeds.make_feed(rt, actor)
    update = await page.refresh(state)
    return screen.shown_once(update, base_url + calendar_feeds.feed_path(new.token))


async def revoke(rt: Runtime, actor: Actor, *, page: Viewing, state: str | None) -> UpdateSet:
    had_one = await calendar_feeds.revoke_feed(rt, actor)
    return screen.revoked(await page.refresh(state), had_one=had_one)
