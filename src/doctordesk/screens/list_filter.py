"""The appointment list's filter as the list shows it: folded into one line with the active filter as chips (each
removes its part), the form itself opened on demand (docs/appointment-list.md#filter-and-search)."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

from doctordesk.domain.appointments.list_filter import MAX_SEARCH_CHARS, STATUSES, ListFilter
from doctordesk.domain.roles import Actor, Role
from doctordesk.i18n import _
from doctordesk.i18n.day_entry import date_attrs, format_entry
from doctordesk.screens.protocol import Action, Element, Option, el
from doctordesk.screens.wording import status_label

ENDPOINT = "/profile/appointments"
FILTER_ENDPOINT = "/profile/appointments/filter"


def endpoint(list_filter: ListFilter) -> str:
    """The list's URL for a filter (the plain list without one)."""
    query = list_filter.query()
    return f"{ENDPOINT}?{urlencode(query)}" if query else ENDPOINT


def form(list_filter: ListFilter, actor: Actor) -> Element:
    """The filter form: status, days, patient name. "Apply" navigates to the list's URL for it. Folded
    (``props.fold``): a client shows its title as a control that opens it."""
    statuses = [Option("", _("Any status"))]
    statuses += [Option(key, status_label(codes[0], actor.role)) for key, codes in STATUSES.items()]
    children = [
        el("f-status", "Combo", label=_("Status"), name="status", value=list_filter.status or "", options=statuses),
        el(
            "f-from",
            "Date",
            label=_("From"),
            name="from",
            value=list_filter.first.isoformat() if list_filter.first else "",
            **date_attrs(),
        ),
        el(
            "f-to",
            "Date",
            label=_("To"),
            name="to",
            value=list_filter.last.isoformat() if list_filter.last else "",
            **date_attrs(),
        ),
    ]
    if actor.role is not Role.PATIENT:
        children.append(
            el("f-q", "Edit", label=_("Patient name"), name="q", value=list_filter.search,
               props={"type": "search", "maxlength": MAX_SEARCH_CHARS, "submit": "apply-filter"})
        )  # fmt: skip
    children.append(
        el("apply-filter", "Button", label=_("Apply"), action=Action("PATCH", FILTER_ENDPOINT, form="filters"))
    )
    return el("filters", "Section", *children, label=_("Filter"), props={"fold": True})


def _chip(ref: str, label: str, *, without: ListFilter) -> Element:
    """One part of the active filter; activating it shows the list without that part."""
    return el(
        ref,
        "Link",
        label=label,
        action=Action("PUT", endpoint(without)),
        props={"chip": _("Remove from the filter: {part}", part=label)},
    )


def chips(list_filter: ListFilter, actor: Actor) -> Element:
    """The active filter in words, one removable chip per part, and "Clear filter" for all of it."""
    parts: list[Element] = []
    if list_filter.status:
        name = status_label(STATUSES[list_filter.status][0], actor.role)
        parts.append(
            _chip("chip-status", _("Status: {status}", status=name), without=replace(list_filter, status=None))
        )
    if list_filter.first:
        day = format_entry(list_filter.first)
        parts.append(_chip("chip-from", _("From {day}", day=day), without=replace(list_filter, first=None)))
    if list_filter.last:
        day = format_entry(list_filter.last)
        parts.append(_chip("chip-to", _("To {day}", day=day), without=replace(list_filter, last=None)))
    if list_filter.search:
        parts.append(
            _chip("chip-q", _("Patient: {name}", name=list_filter.search), without=replace(list_filter, search=""))
        )
    clear = el(
        "clear-filter", "Link", label=_("Clear filter"), visible=list_filter.active, action=Action("PUT", ENDPOINT)
    )
    return el("filter-chips", "Group", *parts, clear, label=_("Active filter"), visible=list_filter.active)
