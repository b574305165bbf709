"""The webhook administration screens (``screens/admin/webhooks.py``): their pages and actions, each through the
webhook services the JSON API uses (``endpoints``, ``deliveries``): the same URL and event-type
checks, the same audit with before and after, a secret that is shown once and never on a page."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.domain.webhooks.rules import MAX_URL_CHARS, SUBSCRIBABLE
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import webhooks as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.screen_base import acted, form_flag, form_text, require_admin, viewing
from doctordesk.services.webhooks import deliveries, endpoints


def list_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        rows = await endpoints.list_endpoints(rt, actor)
        return screen.render_list(rows, layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(
        rt, actor, screen_name=screen.LIST_SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id,
        shows_clinic=False,  # endpoints and deliveries: no reference data
    )  # fmt: skip


def endpoint_page(rt: Runtime, actor: Actor, endpoint_id: int, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        row = await endpoints.get_endpoint(rt, actor, endpoint_id)
        log = await deliveries.list_deliveries(rt, actor, endpoint_id, limit=screen.LOG_SIZE)
        return screen.render_endpoint(row, log, layout=layout, timeout=rt.settings.poll_list_seconds)

    where = screen.endpoint_url(endpoint_id)
    return viewing(
        rt, actor, screen_name=screen.ENDPOINT_SCREEN, endpoint=where, render=render, client_id=client_id,
        shows_clinic=False,  # endpoints and deliveries: no reference data
    )  # fmt: skip


def _form(form: Mapping[str, str]) -> tuple[str | None, str | None, list[str], bool | None]:
    """URL, description, the ticked event types and the content flag; every field's problem at once."""
    fields: dict[str, str] = {}
    url = form_text(form, "url", max_chars=MAX_URL_CHARS, fields=fields)
    description = form.get("description")
    if description is not None:
        problem = text_problem(description, max_chars=500)
        if problem:
            fields["description"] = problem
    types: list[str] = []
    for t in SUBSCRIBABLE:
        if form_flag(form, screen.type_field(t), fields):
            types.append(t)
    content = form_flag(form, "include_content", fields)
    if fields:
        raise ValidationFailed(fields=fields)
    return url, description, types, content


async def create(rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None) -> UpdateSet:
    """Register an endpoint; its signing secret is on this answer only."""
    require_admin(actor)
    url, description, types, content = _form(form)
    if url is None:
        raise ValidationFailed(fields={"url": N_("Required.")})
    view, secret = await endpoints.create_endpoint(
        rt, actor, url=url, event_types=types, description=description, include_content=bool(content)
    )
    text = Text(
        "Registered {url}. Signing secret: {secret} — shown this once; keep it with the receiver.",
        url=view.url, secret=secret,
    )  # fmt: skip
    update = await acted(rt, page, state, "created", text)
    update.patches += [p_update(ref, value="") for ref in ("new-url", "new-description")]
    return update


async def save(
    rt: Runtime, actor: Actor, endpoint_id: int, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Save an endpoint's URL, description, event types and content flag."""
    require_admin(actor)
    url, description, types, content = _form(form)
    changes = endpoints.EndpointChanges(url=url, description=description, event_types=types, include_content=content)
    await endpoints.update_endpoint(rt, actor, endpoint_id, changes)
    return await acted(rt, page, state, "saved", N_("Saved."))


async def set_enabled(
    rt: Runtime, actor: Actor, endpoint_id: int, *, enabled: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    await endpoints.set_enabled(rt, actor, endpoint_id, enabled=enabled)
    return await acted(rt, page, state, "saved", N_("Enabled.") if enabled else N_("Disabled."))


async def send_test(rt: Runtime, actor: Actor, endpoint_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    require_admin(actor)
    sent = await deliveries.send_test(rt, actor, endpoint_id)
    return await acted(rt, page, state, "saved", Text("Test event queued ({id}).", id=sent.message_id))


async def rotate_secret(rt: Runtime, actor: Actor, endpoint_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    """A new signing secret, on this answer only; the old one keeps signing until the overlap ends."""
    require_admin(actor)
    _, secret, until = await endpoints.rotate_secret(rt, actor, endpoint_id)
    text = Text(
        "New signing secret: {secret} — shown this once. The previous one also signs until {until}.",
        secret=secret, until=Moment(until, "UTC"),
    )  # fmt: skip
    return await acted(rt, page, state, "secret", text)


async def replay(
    rt: Runtime, actor: Actor, endpoint_id: int, delivery_id: int, *, page: Viewing, state: str | None
) -> UpdateSet:
    """Send one delivery again under its own ``webhook-id``."""
    require_admin(actor)
    again = await deliveries.replay(rt, actor, endpoint_id, delivery_id)
    return await acted(rt, page, state, "saved", Text("Replay queued ({id}).", id=again.message_id))
