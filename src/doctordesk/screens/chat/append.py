"""The chat brought up to date without rendering the whole window again: the client's page with the thread's newer
messages appended, as the patches a full render and diff would give, or None when only a full render can say
(docs/chat.md, "The answer to a send")."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from doctordesk.domain.chat.messages import Cursor
from doctordesk.i18n.formats import format_local
from doctordesk.screens.chat.screen import CONTAINER, NEWER_MARKER, ChatState, message_elements, render
from doctordesk.screens.protocol import Layout, p_add, p_prepend, p_update

Json = dict[str, Any]
_MARKER_START = "new-message-line~before"


@dataclass(frozen=True, slots=True)
class Shown:
    """The thread window a page shows, read from the page."""

    elements: list[Json]  # the page
    path: list[int]  # indices down to the messages' container
    groups: list[Json]  # the messages' elements, oldest first
    ids: list[int]  # their ids
    first: Cursor | None  # the oldest shown message's position
    newest: Cursor | None  # the newest's

    @property
    def newest_id(self) -> int | None:
        return self.newest.id if self.newest is not None else None


@dataclass(frozen=True, slots=True)
class Appended:
    patches: list[Json]  # from the old page to the new one
    elements: list[Json]  # the new page's elements
    title: str
    messages: list[Json]  # the container's children in it (the old page's dicts where unchanged)


def shown(page: list[Json], *, start_id: int | None, marker_id: int | None) -> Shown | None:
    """What ``page`` shows of the thread, when it is a chat window starting at message ``start_id`` (None: the
    thread had no message) with the "new messages" marker where a render with ``marker_id`` puts it; else None."""
    path = _path(page, CONTAINER)
    if path is None:
        return None
    children: list[Json] = _at(page, path).get("children", [])
    if not children or children[-1]["id"] != NEWER_MARKER:
        return None
    groups = [e for e in children if _is_message(e)]
    ids = [e["props"]["message"] for e in groups]
    if (ids[0] if ids else None) != start_id or _marked(children, ids) != (marker_id if marker_id in ids else None):
        return None
    first, newest = (_cursor(groups[0]), _cursor(groups[-1])) if groups else (None, None)
    return Shown(page, path, groups, ids, first, newest)


def append(shown: Shown, state: ChatState, *, layout: Layout, timeout: int, max_messages: int) -> Appended | None:
    """The page ``shown`` was read from, brought to ``state``: the chat as a render now sees it (the appointment,
    the read positions, the marker ``shown`` was read with), except that ``messages`` holds only the messages after
    the page's newest, oldest first. None when the page is not what this assumes."""
    old = shown.elements
    frame = render(replace(state, messages=(), has_older=False, marker_id=None), layout=layout, timeout=timeout)
    frame_json = frame.elements_json()
    if _path(frame_json, CONTAINER) != shown.path:
        return None
    if _with_children(old, shown.path, _at(frame_json, shown.path)["children"]) != frame_json:
        return None
    newer = state.messages
    if len(shown.ids) + len(newer) > max_messages:  # the window would drop its oldest
        return None
    previous = shown.newest
    for m in newer:
        if (previous is not None and m.cursor.key() <= previous.key()) or m.id in shown.ids or m.id == state.marker_id:
            return None
        previous = m.cursor
    children: list[Json] = _at(old, shown.path)["children"]
    body, marker = children[:-1], children[-1]
    if shown.ids and not _written_now(body, state.appointment.location.timezone):
        return None
    patches: list[Json] = []
    new_body = []
    flags = _ReadFlags(state, shown.groups)
    index = 0
    for e in body:
        if _is_message(e):
            read = flags.of(e, index)
            if read is None:
                return None
            if e["props"]["read"] is not read:
                e = {**e, "props": {**e["props"], "read": read}}
                patches.append(p_update(e["id"], props=e["props"]))
            index += 1
        new_body.append(e)
    added = [e.to_json() for m in newer for e in message_elements(m, state)]
    if added and body:
        after = body[-1]["id"]
        for e in added:
            patches.append(p_add(e, parent=CONTAINER, after=after))
            after = e["id"]
    elif added:
        patches.append(p_prepend(added, parent=CONTAINER))
    children = [*new_body, *added, marker]
    return Appended(patches, _with_children(old, shown.path, children), frame.title, children)


def newest_unread_incoming(shown: Shown, read_up_to: Cursor | None) -> Cursor | None:
    """The newest message of the page that others sent after ``read_up_to`` (what opening it marks read)."""
    unread = [
        _cursor(g)
        for g in shown.groups
        if g["ref"].startswith("incoming-") and (read_up_to is None or _cursor(g).key() > read_up_to.key())
    ]
    return unread[-1] if unread else None


def _is_message(e: Json) -> bool:
    ref: str = e["ref"]
    return e["type"] == "Group" and ref.startswith(("incoming-", "outgoing-"))


def _cursor(group: Json) -> Cursor:
    return Cursor(datetime.fromisoformat(group["props"]["time"]), group["props"]["message"])


class _ReadFlags:
    """Shown messages' read flags now (as ``screens.chat.screen.message_elements`` decides them). The messages stand in
    the thread's order, so each read position reads a first run of them: where it ends is searched, not every
    message's time compared."""

    def __init__(self, state: ChatState, groups: list[Json]) -> None:
        self.viewer, self.doctor = state.viewer.user_id, state.appointment.doctor.id
        # How many shown messages each position reads: the viewer's (incoming), support's (the doctor's
        # messages), the doctor's (the agents').
        self.incoming, self.doctors, self.agents = (
            bisect_right(groups, p.key(), key=lambda g: _cursor(g).key()) if p is not None else 0
            for p in (state.viewer_read, state.support_read, state.doctor_read)
        )

    def of(self, group: Json, index: int) -> bool | None:
        """The flag of the ``index``-th shown message; None when the page shows it from another viewer's side."""
        props = group["props"]
        sender = props["sender_id"]
        if sender != self.viewer:
            return index < self.incoming if props["direction"] == "incoming" else None
        if props["direction"] != "outgoing":
            return None
        return index < (self.doctors if sender == self.doctor else self.agents)


def _marked(children: list[Json], ids: list[int]) -> int | None:
    """The message the "new messages" marker stands before (-1: a marker out of place or twice)."""
    marked: int | None = None
    for i, e in enumerate(children):
        if e["id"] == _MARKER_START:
            following = _message_of(children[i + 3]) if i + 3 < len(children) else None
            if marked is not None or following not in ids:
                return -1
            marked = following
    return marked


def _message_of(element: Json) -> int | None:
    if element["ref"] == "spacer":  # an outgoing message's 10 % spacer, ``spacer~{id}``
        return int(element["id"].split("~", 1)[1])
    if _is_message(element):
        message: int = element["props"]["message"]
        return message
    return None


def _written_now(body: list[Json], timezone: str) -> bool:
    """Whether the shown messages' times read as a render writes them now (the location's time zone and the
    reader's language), judged by the newest."""
    props = next(e for e in reversed(body) if _is_message(e))["props"]
    return bool(props["time_text"] == format_local(datetime.fromisoformat(props["time"]), timezone))


def _path(tree: list[Json], element_id: str) -> list[int] | None:
    """Indices from the top of ``tree`` down to the element ``element_id`` (depth first)."""
    for i, e in enumerate(tree):
        if e["id"] == element_id:
            return [i]
        below = _path(e.get("children", []), element_id)
        if below is not None:
            return [i, *below]
    return None


def _at(tree: list[Json], path: list[int]) -> Json:
    node = tree[path[0]]
    for i in path[1:]:
        node = node["children"][i]
    return node


def _with_children(tree: list[Json], path: list[int], children: list[Json]) -> list[Json]:
    """``tree`` with the element at ``path`` given ``children``; only the elements on the path are copied."""
    copy = list(tree)
    head, rest = path[0], path[1:]
    if rest:
        copy[head] = {**tree[head], "children": _with_children(tree[head]["children"], rest, children)}
    else:
        copy[head] = {**tree[head], "children": children}
    return copy
