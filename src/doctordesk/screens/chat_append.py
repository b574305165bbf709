"""The answer to a send without rendering the sender's whole chat again: the client's page with the new message
appended, as the patches a full render and diff would give.

After a send, a full render of the chat differs from the page the sender had only here, provided no other message
came since that page was rendered (the caller checks that the thread's newest message before the send is the
page's newest: docs/chat.md, "The answer to a send"):

- the new message's elements stand before ``newer-messages-marker``;
- each message's read flag is what the read positions now say: every incoming message is read (the sender's
  position is the new message, the newest of the thread), an outgoing one once the other side has read it.

Everything else a full render shows besides the messages, the "frame" (header, composer, title), is rendered anew
from the current appointment (a dozen elements, whatever the window) and compared with the old page's. Any
difference, or a page that is not the window the state token names as this viewer sees it, and there is no
shortcut (None): the caller renders the whole chat. The result shares the old page's unchanged elements (cached
pages are never changed in place).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from doctordesk.domain.chat import Cursor
from doctordesk.i18n.formats import format_local
from doctordesk.screens.chat import CONTAINER, NEWER_MARKER, ChatState, message_elements, render
from doctordesk.screens.protocol import Layout, p_add, p_prepend, p_update

Json = dict[str, Any]
_MARKER_START = "new-message-line~before"


@dataclass(frozen=True, slots=True)
class Appended:
    patches: list[Json]  # from the old page to the new one
    elements: list[Json]  # the new page's elements
    title: str


@dataclass(frozen=True, slots=True)
class Window:
    """What the client's page must show for the shortcut to hold: the window's first message (None: the thread
    had none), where the "new messages" marker stands, and the thread's newest message before the send."""

    start_id: int | None
    marker_id: int | None
    previous_id: int | None
    max_messages: int  # a longer window drops its oldest messages: rendered in full


def append_sent(old: list[Json], state: ChatState, window: Window, *, layout: Layout, timeout: int) -> Appended | None:
    """``old`` with the sent message appended. ``state`` is the chat as a render after the send sees it (the
    appointment, the read positions, ``viewer_read`` the sent message's), except that ``messages`` holds only the
    sent message, the thread's newest. None when ``old`` is not the page this shortcut assumes."""
    (sent,) = state.messages
    frame = render(replace(state, messages=(), has_older=False, marker_id=None), layout=layout, timeout=timeout)
    frame_json = frame.elements_json()
    path = _path(old, CONTAINER)
    if path is None or path != _path(frame_json, CONTAINER):
        return None
    children: list[Json] = _at(old, path).get("children", [])
    if not children or children[-1]["id"] != NEWER_MARKER:
        return None
    if _with_children(old, path, _at(frame_json, path)["children"]) != frame_json:
        return None
    body = children[:-1]
    ids = _message_ids(body, window.marker_id)
    if ids is None or len(ids) + 1 > window.max_messages or sent.id in ids or window.marker_id == sent.id:
        return None
    if (ids[0] if ids else None) != window.start_id or (ids[-1] if ids else None) != window.previous_id:
        return None
    if ids and not _before(body, sent.created_at, sent.id, state.appointment.location.timezone):
        return None
    patches: list[Json] = []
    new_body = []
    for e in body:
        if e["type"] == "Group" and e["ref"].startswith(("incoming-", "outgoing-")):
            read = _read(e, state)
            if read is None:
                return None
            if e["props"]["read"] is not read:
                e = {**e, "props": {**e["props"], "read": read}}
                patches.append(p_update(e["id"], props=e["props"]))
        new_body.append(e)
    added = [e.to_json() for e in message_elements(sent, state)]
    if body:
        after = body[-1]["id"]
        for e in added:
            patches.append(p_add(e, parent=CONTAINER, after=after))
            after = e["id"]
    else:
        patches.append(p_prepend(added, parent=CONTAINER))
    elements = _with_children(old, path, [*new_body, *added, children[-1]])
    return Appended(patches, elements, frame.title)


def _read(group: Json, state: ChatState) -> bool | None:
    """A shown message's read flag now (as ``screens.chat.message_elements`` decides it); None when the page shows
    it from another viewer's side."""
    props = group["props"]
    outgoing = props["sender_id"] == state.viewer.user_id
    if group["ref"] != f"{'outgoing' if outgoing else 'incoming'}-{props['message']}":
        return None
    if not outgoing:
        return True  # the viewer's position is the sent message, after every shown one
    position = state.support_read if props["sender_id"] == state.appointment.doctor.id else state.doctor_read
    return (
        position is not None and position.key() >= Cursor(datetime.fromisoformat(props["time"]), props["message"]).key()
    )


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


def _message_ids(body: list[Json], marker_id: int | None) -> list[int] | None:
    """The ids of the messages the container shows, oldest first; None when the "new messages" marker does not
    stand where a render with ``marker_id`` puts it (before that message, and only if it is shown)."""
    ids: list[int] = []
    marked: int | None = None
    for i, e in enumerate(body):
        if e["type"] == "Group" and e["ref"].startswith(("incoming-", "outgoing-")):
            ids.append(e["props"]["message"])
        elif e["id"] == _MARKER_START:
            following = body[i + 3] if i + 3 < len(body) else None
            if following is None or marked is not None:
                return None
            marked = _message_of(following)
    if marked != (marker_id if marker_id in ids else None):
        return None
    return ids


def _message_of(element: Json) -> int | None:
    ref: str = element["ref"]
    if ref == "spacer":  # an outgoing message's 10 % spacer, ``spacer~{id}``
        return int(element["id"].split("~", 1)[1])
    if element["type"] == "Group" and ref.startswith(("incoming-", "outgoing-")):
        message: int = element["props"]["message"]
        return message
    return None


def _before(body: list[Json], at: datetime, message_id: int, timezone: str) -> bool:
    """Whether the page's newest message comes before the sent one in the thread's order (time, then id), and
    its time reads as a render now writes it (the location's time zone and the reader's language)."""
    newest = next(e for e in reversed(body) if e["type"] == "Group" and e["ref"].startswith(("incoming-", "outgoing-")))
    props = newest["props"]
    shown = datetime.fromisoformat(props["time"])
    return (shown, props["message"]) < (at, message_id) and props["time_text"] == format_local(shown, timezone)
