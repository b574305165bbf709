"""The audit trail screen: every recorded change, newest first, filtered by actor, appointment, action and days,
a page at a time, with the same filter's CSV and JSON Lines export as downloads."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, timedelta
from urllib.parse import urlencode

from doctordesk.domain.audit import AuditFilter, AuditRow
from doctordesk.i18n import _
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.i18n.formats import format_local
from doctordesk.screens.admin.audit_changes import Names, lines
from doctordesk.screens.admin.audit_words import action_words, entity_words
from doctordesk.screens.admin.pages import BASE, page
from doctordesk.screens.admin.users import ROLE_LABELS
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-audit"
ENDPOINT = f"{BASE}/audit"
EXPORT = "/admin/audit/export"
PAGE_SIZE = 50


def query_of(audit_filter: AuditFilter) -> dict[str, str]:
    """The filter as the query both the screen and the export read (``from``/``to`` are instants)."""
    pairs = {
        "actor": audit_filter.actor_id,
        "appointment": audit_filter.appointment_id,
        "action": audit_filter.action,
        "entity": audit_filter.entity,
        "from": audit_filter.since.astimezone(UTC).isoformat() if audit_filter.since else None,
        "to": audit_filter.until.astimezone(UTC).isoformat() if audit_filter.until else None,
    }
    return {k: str(v) for k, v in pairs.items() if v is not None}


def endpoint(audit_filter: AuditFilter, cursor: str | None = None) -> str:
    query = query_of(audit_filter) | ({"cursor": cursor} if cursor else {})
    return f"{ENDPOINT}?{urlencode(query)}" if query else ENDPOINT


def who_with_role(name: str, role: str) -> str:
    """A person with their role, the role named once: "Dr. Lena Berger (Doctor)", but "Kim Novak (Support)" as it
    is, since the name already says it (by the role's code or its words in the reader's language)."""
    words = _(ROLE_LABELS.get(role, role))
    said = {role.lower(), words.lower(), words.split()[0].split("-")[0].lower()}
    if any(re.search(rf"\b{re.escape(w)}\b", name.lower()) for w in said if w):
        return name
    return f"{name} ({words})"


def _about(r: AuditRow, names: Names) -> str:
    """What the entry is about: people and locations by name, anything else by its kind and number."""
    if r.entity_id is not None and r.entity in ("user", "doctor") and r.entity_id in names.people:
        return f"{entity_words(r.entity, None)}: {names.people[r.entity_id]}"
    if r.entity_id is not None and r.entity == "location" and r.entity_id in names.locations:
        return f"{entity_words(r.entity, None)}: {names.locations[r.entity_id]}"
    return entity_words(r.entity, r.entity_id)


def _row(r: AuditRow, names: Names) -> Element:
    if r.actor_id is None:
        who = _("the service")
    else:
        who = names.people.get(r.actor_id) or _("user {id}", id=r.actor_id)
    return el(
        f"audit-{r.id}",
        "Row",
        el(
            f"audit-at-{r.id}",
            "Regular",
            label=_("When"),
            value=format_local(r.at, names.zone, seconds=True),
            props={"datetime": r.at.astimezone(UTC).isoformat()},
        ),
        el(f"audit-actor-{r.id}", "Regular", label=_("Who"), value=who),
        # The words, then the code the filter and the exports match on.
        el(
            f"audit-action-{r.id}",
            "Regular",
            label=_("Action"),
            value=f"{action_words(r.action)} · {r.action}",
            props={"code": r.action},
        ),
        el(f"audit-entity-{r.id}", "Regular", label=_("About"), value=_about(r, names)),
        # Each changed field as "before → after", in words; the raw record is in the exports.
        el(f"audit-details-{r.id}", "Text", value="\n".join(lines(r.details, names))),
    )


def render(
    audit_filter: AuditFilter,
    rows: Sequence[AuditRow],
    names: Names,
    *,
    people: Sequence[tuple[int, str, str]],
    cursor: str | None,
    next_cursor: str | None,
    layout: Layout,
    timeout: int,
) -> Page:
    day = "%Y-%m-%d"
    filters = el(
        "filters",
        "Section",
        # A person chosen by name (the ids are nowhere else on the screens).
        el("f-actor", "Combo", label=_("Who"), name="actor", value=str(audit_filter.actor_id or ""),
           options=[Option("", _("Anyone")), *(Option(str(i), who_with_role(name, role)) for i, name, role in people)]),
        el("f-appointment", "Edit", label=_("Appointment id"), name="appointment",
           value=str(audit_filter.appointment_id or "")),
        el("f-action", "Edit", label=_("Action, e.g. appointment.approve"), name="action",
           value=audit_filter.action or ""),
        el("f-from", "Date", label=_("From day (UTC)"), name="from",
           value=audit_filter.since.strftime(day) if audit_filter.since else "", **date_attrs()),
        el("f-to", "Date", label=_("Until day (UTC, inclusive)"), name="to",
           value=(audit_filter.until - timedelta(days=1)).strftime(day) if audit_filter.until else "", **date_attrs()),
        el("apply-filters", "Button", label=_("Apply"), action=Action("PATCH", f"{ENDPOINT}/filter", form="filters")),
        label=_("Filter"),
    )  # fmt: skip
    query = urlencode(query_of(audit_filter))
    exports = el(
        "exports",
        "Group",
        el("export-csv", "Attachment", label="audit.csv",
           props={"href": f"{EXPORT}?{query}&format=csv" if query else f"{EXPORT}?format=csv", "mime": "text/csv"}),
        el("export-jsonl", "Attachment", label="audit.jsonl",
           props={"href": f"{EXPORT}?{query}&format=jsonl" if query else f"{EXPORT}?format=jsonl",
                  "mime": "application/jsonl"}),
        label=_("Export this filter"),
    )  # fmt: skip
    listing = el(
        "entries",
        "Section",
        el("entries-empty", "Caption", value=_("Nothing recorded for this filter."), visible=not rows),
        *(_row(r, names) for r in rows),
        el("newest", "Link", label=_("Newest"), visible=cursor is not None,
           action=Action("PUT", endpoint(audit_filter))),
        el("older", "Link", label=_("Older"), visible=next_cursor is not None,
           action=Action("PUT", endpoint(audit_filter, next_cursor))),
        label=_("Entries, newest first"),
    )  # fmt: skip
    return page(
        screen=SCREEN, current="audit", title=_("Audit trail"), endpoint=endpoint(audit_filter, cursor),
        elements=[filters, exports, listing], layout=layout, timeout=timeout,
    )  # fmt: skip
