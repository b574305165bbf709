"""The administration screens for webhooks: the endpoints with a form to register one (its signing secret shown on
the answer only), and one endpoint's page: its settings, disable or enable, a test event, a new signing secret
(shown once), and its delivery log with a replay per delivery (the same ``webhook-id`` again)."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.webhooks import SUBSCRIBABLE
from doctordesk.screens.admin_pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.services.webhook_deliveries import DeliveryView
from doctordesk.services.webhook_endpoints import EndpointView

LIST_SCREEN = "admin-webhooks"
ENDPOINT_SCREEN = "admin-webhook"
ENDPOINT = f"{BASE}/webhooks"
LOG_SIZE = 50


def endpoint_url(endpoint_id: int) -> str:
    return f"{ENDPOINT}/{endpoint_id}"


def type_field(event_type: str) -> str:
    """The form field of one event type's checkbox."""
    return f"type~{event_type}"


def _fields(prefix: str, e: EndpointView | None) -> list[Element]:
    chosen = set(e.event_types) if e else set()
    return [
        el(f"{prefix}url", "Edit", label="URL (https)", name="url", value=e.url if e else None),
        el(f"{prefix}description", "Edit", label="Description", name="description",
           value=e.description if e else None),
        el(f"{prefix}types", "Group",
           *(el(f"{prefix}type-{t}", "Checkbox", label=t, name=type_field(t), value=t in chosen)
             for t in SUBSCRIBABLE),
           label="Event types"),
        el(f"{prefix}content", "Checkbox", label="Chat messages carry their text", name="include_content",
           value=e.include_content if e else False),
    ]  # fmt: skip


def _state(e: EndpointView) -> str:
    if e.enabled:
        return "Enabled" + (" · failing" if e.failing_since else "")
    return f"Disabled: {e.disabled_reason or ''}".strip()


def render_list(rows: Sequence[EndpointView], *, layout: Layout, timeout: int) -> Page:
    items = [
        el(
            f"webhook-{e.id}",
            "Row",
            el(f"webhook-url-{e.id}", "Link", label=e.url, action=Action("PUT", endpoint_url(e.id))),
            el(f"webhook-types-{e.id}", "Caption", value=", ".join(e.event_types)),
            el(f"webhook-state-{e.id}", "Regular", value=_state(e)),
        )
        for e in rows
    ]
    form = el(
        "new-webhook",
        "Section",
        *_fields("new-", None),
        el("register", "Button", label="Register endpoint",
           action=Action("POST", f"{ENDPOINT}/create", form="new-webhook")),
        label="Register an endpoint",
    )  # fmt: skip
    listing = el(
        "webhooks",
        "Section",
        el("webhooks-empty", "Caption", value="No endpoints yet.", visible=not rows),
        *items,
        label="Endpoints",
    )
    return page(
        screen=LIST_SCREEN, current="webhooks", title="Webhooks", endpoint=ENDPOINT,
        elements=[notice("created", tone="warning"), listing, form], layout=layout, timeout=timeout,
    )  # fmt: skip


def _delivery(d: DeliveryView, endpoint_id: int) -> Element:
    outcome = d.last_error or (f"HTTP {d.last_status_code}" if d.last_status_code else "")
    return el(
        f"delivery-{d.id}",
        "Row",
        el(f"delivery-type-{d.id}", "Regular", value=f"{d.event_type} · {d.status}"),
        el(f"delivery-when-{d.id}", "Caption",
           value=f"{d.created_at:%Y-%m-%d %H:%M} UTC · attempts {d.attempts} · replays {d.replays} · {outcome}"),
        el(f"delivery-id-{d.id}", "Caption", value=d.message_id),
        el(f"replay-{d.id}", "Button", label="Replay",
           action=Action("POST", f"{endpoint_url(endpoint_id)}/deliveries/{d.id}/replay")),
    )  # fmt: skip


def render_endpoint(e: EndpointView, log: Sequence[DeliveryView], *, layout: Layout, timeout: int) -> Page:
    base = endpoint_url(e.id)
    settings = el(
        "settings",
        "Section",
        *_fields("", e),
        el("save", "Button", label="Save", action=Action("POST", f"{base}/save", form="settings")),
        label="Settings",
    )
    toggle = (
        el("toggle-enabled", "Button", label="Disable", action=Action("POST", f"{base}/disable",
           confirm="Disable this endpoint? Deliveries wait until it is enabled again."))
        if e.enabled
        else el("toggle-enabled", "Button", label="Enable", action=Action("POST", f"{base}/enable"))
    )  # fmt: skip
    status = el(
        "status",
        "Section",
        el("state", "Regular", value=_state(e)),
        toggle,
        el("send-test", "Button", label="Send a test event", action=Action("POST", f"{base}/test")),
        el(
            "rotate-secret",
            "Button",
            label="New signing secret",
            action=Action(
                "POST",
                f"{base}/rotate-secret",
                confirm="Make a new signing secret? The old one keeps signing for a while, then stops.",
            ),
        ),
        notice("secret", tone="warning"),
        label="Status",
    )
    deliveries = el(
        "deliveries",
        "Section",
        el("deliveries-empty", "Caption", value="Nothing delivered yet.", visible=not log),
        el("deliveries-hint", "Caption", value=f"The newest {LOG_SIZE}.", visible=len(log) >= LOG_SIZE),
        *(_delivery(d, e.id) for d in log),
        label="Delivery log",
    )
    return page(
        screen=ENDPOINT_SCREEN, current="webhooks", title=f"Webhook #{e.id}", endpoint=base,
        elements=[notice("saved"), status, settings, deliveries], layout=layout, timeout=timeout,
    )  # fmt: skip
