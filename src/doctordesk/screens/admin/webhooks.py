"""The administration screens for webhooks: the endpoints with a form to register one (its signing secret shown on
the answer only), and one endpoint's page: its settings, disable or enable, a test event, a new signing secret
(shown once), and its delivery log with a replay per delivery (the same ``webhook-id`` again)."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.webhooks.rules import SUBSCRIBABLE
from doctordesk.domain.webhooks.views import DeliveryView, EndpointView
from doctordesk.i18n import N_, _, stored
from doctordesk.i18n.formats import format_local
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Page, el

LIST_SCREEN = "admin-webhooks"
ENDPOINT_SCREEN = "admin-webhook"
ENDPOINT = f"{BASE}/webhooks"
LOG_SIZE = 50
# A delivery's status (``services/webhooks/outbox.py``) in words.
DELIVERY_STATES = {"pending": N_("pending"), "delivered": N_("delivered"), "failed": N_("failed")}
# The event types in words; the code (the receivers' name, docs/webhooks.md) follows, as the audit trail's actions
# do, so an admin can match it with what a receiver logs.
EVENT_WORDS = {
    "appointment.requested": N_("Appointment requested"),
    "appointment.approved": N_("Appointment approved"),
    "appointment.alternatives-offered": N_("Other times offered"),
    "appointment.declined": N_("Appointment declined"),
    "appointment.offer-accepted": N_("Offered time accepted"),
    "appointment.offers-rejected": N_("Offered times declined"),
    "appointment.canceled": N_("Appointment canceled"),
    "appointment.completed": N_("Appointment completed"),
    "appointment.no-show": N_("Patient did not come"),
    "appointment.reschedule-requested": N_("Reschedule requested"),
    "chat.message-created": N_("Chat message"),
    "webhook.test": N_("Test event"),
}


def event_words(event_type: str) -> str:
    """``Termin zugesagt · appointment.approved``: the words, then the code (the code alone when it has none)."""
    words = EVENT_WORDS.get(event_type)
    return f"{_(words)} · {event_type}" if words else event_type


def endpoint_url(endpoint_id: int) -> str:
    return f"{ENDPOINT}/{endpoint_id}"


def type_field(event_type: str) -> str:
    """The form field of one event type's checkbox."""
    return f"type~{event_type}"


def _fields(prefix: str, e: EndpointView | None) -> list[Element]:
    chosen = set(e.event_types) if e else set()
    return [
        el(f"{prefix}url", "Edit", label=_("URL (https)"), name="url", value=e.url if e else None),
        el(f"{prefix}description", "Edit", label=_("Description"), name="description",
           value=e.description if e else None),
        el(f"{prefix}types", "Group",
           *(el(f"{prefix}type-{t}", "Checkbox", label=event_words(t), name=type_field(t), value=t in chosen)
             for t in SUBSCRIBABLE),
           label=_("Event types")),
        el(f"{prefix}content", "Checkbox", label=_("Chat messages carry their text"), name="include_content",
           value=e.include_content if e else False),
    ]  # fmt: skip


def _state(e: EndpointView) -> str:
    if e.enabled:
        return _("Enabled · failing") if e.failing_since else _("Enabled")
    if e.disabled_reason:
        return _("Disabled: {reason}", reason=stored(e.disabled_reason))
    return _("Disabled")


def render_list(rows: Sequence[EndpointView], *, layout: Layout, timeout: int) -> Page:
    items = [
        el(
            f"webhook-{e.id}",
            "Row",
            el(f"webhook-url-{e.id}", "Link", label=e.url, action=Action("PUT", endpoint_url(e.id))),
            el(f"webhook-types-{e.id}", "Caption", value=", ".join(event_words(t) for t in e.event_types)),
            el(f"webhook-state-{e.id}", "Regular", value=_state(e)),
        )
        for e in rows
    ]
    form = el(
        "new-webhook",
        "Section",
        *_fields("new-", None),
        el("register", "Button", label=_("Register endpoint"),
           action=Action("POST", f"{ENDPOINT}/create", form="new-webhook")),
        label=_("Register an endpoint"),
    )  # fmt: skip
    listing = el(
        "webhooks",
        "Section",
        el("webhooks-empty", "Caption", value=_("No endpoints yet."), visible=not rows),
        *items,
        label=_("Endpoints"),
    )
    return page(
        screen=LIST_SCREEN, current="webhooks", title=_("Webhooks"), endpoint=ENDPOINT,
        elements=[notice("created", tone="warning"), listing, form], layout=layout, timeout=timeout,
    )  # fmt: skip


def _delivery(d: DeliveryView, endpoint_id: int) -> Element:
    # The receiver's answer (an HTTP status or a connection error) is shown as recorded: it is the receiver's.
    outcome = d.last_error or (f"HTTP {d.last_status_code}" if d.last_status_code else "")
    state = _(DELIVERY_STATES[d.status]) if d.status in DELIVERY_STATES else d.status
    when = _(
        "{moment} · attempts {attempts} · replays {replays}",
        moment=format_local(d.created_at, "UTC"), attempts=d.attempts, replays=d.replays,
    )  # fmt: skip
    return el(
        f"delivery-{d.id}",
        "Row",
        el(f"delivery-type-{d.id}", "Regular", value=f"{event_words(d.event_type)} · {state}"),
        el(f"delivery-when-{d.id}", "Caption", value=f"{when} · {outcome}" if outcome else when),
        el(f"delivery-id-{d.id}", "Caption", value=d.message_id),
        el(f"replay-{d.id}", "Button", label=_("Replay"),
           action=Action("POST", f"{endpoint_url(endpoint_id)}/deliveries/{d.id}/replay")),
    )  # fmt: skip


def render_endpoint(endpoint: EndpointView, log: Sequence[DeliveryView], *, layout: Layout, timeout: int) -> Page:
    base = endpoint_url(endpoint.id)
    settings = el(
        "settings",
        "Section",
        *_fields("", endpoint),
        el("save", "Button", label=_("Save"), action=Action("POST", f"{base}/save", form="settings")),
        label=_("Settings"),
    )
    toggle = (
        el("toggle-enabled", "Button", label=_("Disable"), action=Action("POST", f"{base}/disable",
           confirm=_("Disable this endpoint? Deliveries wait until it is enabled again.")))
        if endpoint.enabled
        else el("toggle-enabled", "Button", label=_("Enable"), action=Action("POST", f"{base}/enable"))
    )  # fmt: skip
    status = el(
        "status",
        "Section",
        el("state", "Regular", value=_state(endpoint)),
        toggle,
        el("send-test", "Button", label=_("Send a test event"), action=Action("POST", f"{base}/test")),
        el(
            "rotate-secret",
            "Button",
            label=_("New signing secret"),
            action=Action(
                "POST",
                f"{base}/rotate-secret",
                confirm=_("Make a new signing secret? The old one keeps signing for a while, then stops."),
            ),
        ),
        notice("secret", tone="warning"),
        label=_("Status"),
    )
    deliveries = el(
        "deliveries",
        "Section",
        el("deliveries-empty", "Caption", value=_("Nothing delivered yet."), visible=not log),
        el("deliveries-hint", "Caption", value=_("The newest {count}.", count=LOG_SIZE), visible=len(log) >= LOG_SIZE),
        *(_delivery(d, endpoint.id) for d in log),
        label=_("Delivery log"),
    )
    return page(
        screen=ENDPOINT_SCREEN, current="webhooks", title=_("Webhook #{id}", id=endpoint.id), endpoint=base,
        elements=[notice("saved"), status, settings, deliveries], layout=layout, timeout=timeout,
    )  # fmt: skip
