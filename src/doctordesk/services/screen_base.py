"""What the administration screens' services share: admins only (anyone else gets 404, as for a screen that is
not theirs), the viewing of a screen that changes with the admin topic, telling every admin's open screens that
something changed, an action's answer with its notice, a choice answered as a navigation, reading form
fields, and the zone the administration shows times in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from doctordesk.domain import roles
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import ADMIN_TOPIC, CLINIC_TOPIC, DomainEvent
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import Page, UpdateSet, p_update
from doctordesk.screens.state import Shown, Viewer
from doctordesk.screens.viewing import Viewing

_FLAGS = {"true": True, "false": False}


def clinic_zone(locations: Mapping[int, str]) -> str:
    """The zone the administration shows times in: the clinic's, that of its first location (UTC without one)."""
    return locations[min(locations)] if locations else "UTC"


def require_admin(actor: Actor) -> None:
    """Admins only: anyone else gets 404, as for a screen that is not theirs (the rule: ``roles.require_admin``)."""
    roles.require_admin(actor, hidden=True, message=N_("Screen not found."))


def viewing(
    rt: Runtime,
    actor: Actor,
    *,
    screen_name: str,
    endpoint: str,
    render: Callable[[], Awaitable[Page]],
    client_id: str | None,
    shows_clinic: bool = True,
) -> Viewing:
    """An administration screen as ``actor`` sees it (admins only): it changes with the admin topic and the
    clinic's when it ``shows_clinic`` (reference data, also changed through the JSON API). Repeatable:
    who may see it is the actor's role, which the auth cache ties to the answer. A render that does not say when
    time changes it (``state.lasting``: the audit trail and the webhook deliveries grow without an admin
    event) is trusted for ``state.UNTIMED_SECONDS``."""
    require_admin(actor)
    timeout = rt.settings.poll_list_seconds
    topics = (ADMIN_TOPIC, CLINIC_TOPIC) if shows_clinic else (ADMIN_TOPIC,)
    shown = Shown(screen_name, endpoint, topics, repeatable=True)
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, timeout, render)


async def changed(rt: Runtime) -> None:
    """Tell every admin's open screens that something they show changed."""
    await rt.publish([DomainEvent(kind=EventKind.ADMIN_CHANGED, topics=(ADMIN_TOPIC,))])


def told(update: UpdateSet, ref: str, text: str) -> UpdateSet:
    """``update`` with the notice ``ref`` showing ``text`` (an ``N_`` text or a ``Text``) in the reader's language,
    shown until the screen is opened again."""
    update.patches.append(p_update(ref, value=_(text), visible=True))
    return update


def form_text(form: Mapping[str, str], name: str, *, max_chars: int, fields: dict[str, str]) -> str | None:
    """A free-text field (None when absent or empty), its problem noted in ``fields``."""
    value = form.get(name)
    if value is None or not value.strip():
        return None
    problem = text_problem(value, max_chars=max_chars)
    if problem:
        fields[name] = problem
    return value.strip()


def form_flag(form: Mapping[str, str], name: str, fields: dict[str, str]) -> bool | None:
    value = form.get(name)
    if value is None:
        return None
    if value not in _FLAGS:
        fields[name] = N_("true or false.")
        return None
    return _FLAGS[value]


async def acted(rt: Runtime, page: Viewing, state: str | None, ref: str, text: str) -> UpdateSet:
    """An action's answer: every admin's screens told, this one refreshed with the notice ``ref`` showing ``text``."""
    await changed(rt)
    return told(await page.refresh(state), ref, text)


def navigation(rt: Runtime, screen_name: str, endpoint: str) -> UpdateSet:
    """A choice (a filter, another doctor or patient) answered as a navigation to the screen that shows it."""
    return UpdateSet(screen=screen_name, state="", timeout=rt.settings.poll_list_seconds, navigate=endpoint)
