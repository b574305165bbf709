"""The calendar feed screen: the doctor's feed address (whether one is live, since when, when a calendar last
fetched it), Create / Rotate / Revoke, and the new address with a Copy control, shown once after it is made."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from doctordesk.i18n import N_, _
from doctordesk.i18n.formats import format_local
from doctordesk.screens.protocol import Action, Element, Layout, Page, UpdateSet, el, p_update

SCREEN = "calendar-feed"
ENDPOINT = "/profile/calendar-feed"
MAKE_ENDPOINT = f"{ENDPOINT}/make"
REVOKE_ENDPOINT = f"{ENDPOINT}/revoke"
LIST_ENDPOINT = "/profile/appointments"

ABOUT = N_(
    "Subscribe to this address in Google Calendar (Other calendars, From URL), Outlook (Add calendar, Subscribe "
    "from web) or Apple Calendar (New Calendar Subscription). It shows your approved appointments, requests "
    "awaiting your decision and the times you offered, from the last 30 days to a year ahead, in each clinic's "
    "time zone. It shows no patient names or notes, only the service, the place and the appointment's number. "
    "Anyone who has the address can read it: keep it private, and rotate it if it may have been seen by others."
)


class FeedLike(Protocol):
    @property
    def prefix(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_fetched_at(self) -> datetime | None: ...


def render(feed: FeedLike | None, *, timezone: str, layout: Layout, timeout: int) -> Page:
    """The screen for a doctor with the live feed ``feed`` (None: no address yet), times in ``timezone``. The
    address itself is never on the page: it is shown by ``shown_once`` in the answer to Create or Rotate."""
    live = feed is not None

    def _when(moment: datetime) -> str:
        return format_local(moment, timezone)

    if feed is None:
        status, fetched = _("No feed address yet."), None
    else:
        status = _("Active since {when}. The address begins {prefix}…", when=_when(feed.created_at), prefix=feed.prefix)
        fetched = _when(feed.last_fetched_at) if feed.last_fetched_at else _("Not yet fetched by a calendar.")
    rotate = _("The current address stops working at once; calendars subscribed to it need the new one. Rotate?")
    elements: list[Element] = [
        el("back", "Link", label=_("Back to the list"), action=Action("PUT", LIST_ENDPOINT)),
        el("title", "Heading", value=_("Calendar feed")),
        el("about", "Text", value=_(ABOUT)),
        el("feed-status", "Regular", label=_("Feed"), value=status),
        el("feed-fetched", "Regular", label=_("Last fetched"), value=fetched, visible=fetched is not None),
        el(
            "feed-new",
            "Section",
            el("feed-url", "Regular", label=_("Address"), value=None),
            el("copy-url", "Button", label=_("Copy address"), props={"copy": ""}),
            el("feed-once", "Caption", value=_("Shown this once: copy it now. Rotate to get a new one later.")),
            label=_("Your new feed address"),
            visible=False,
        ),
        el(
            "make",
            "Button",
            label=_("Rotate address") if live else _("Create feed address"),
            action=Action("POST", MAKE_ENDPOINT, confirm=rotate if live else None),
        ),
        el(
            "revoke",
            "Button",
            label=_("Revoke"),
            visible=live,
            action=Action(
                "POST", REVOKE_ENDPOINT, confirm=_("The address stops working at once. Revoke the calendar feed?")
            ),
        ),
        el("feed-notice", "Notice", visible=False, props={"tone": "info"}),
    ]
    return Page(
        screen=SCREEN,
        title=_("Calendar feed"),
        endpoint=ENDPOINT,
        poll=ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )


def shown_once(update: UpdateSet, url: str) -> UpdateSet:
    """``update`` with the new address and its Copy control shown (until the screen is opened again)."""
    update.patches += [
        p_update("feed-url", value=url),
        p_update("copy-url", props={"copy": url}),
        p_update("feed-new", visible=True),
        p_update("feed-notice", visible=False, value=None),
    ]
    return update


def revoked(update: UpdateSet, *, had_one: bool) -> UpdateSet:
    """``update`` with the shown address (if any) hidden and a note of what happened."""
    text = _("The feed address was revoked: it no longer works.") if had_one else _("There was no feed address.")
    update.patches += [
        p_update("feed-url", value=None),
        p_update("copy-url", props={"copy": ""}),
        p_update("feed-new", visible=False),
        p_update("feed-notice", value=text, visible=True),
    ]
    return update
