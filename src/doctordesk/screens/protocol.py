"""The screen protocol: page objects (trees of elements with a ``ref`` and a unique ``id``), update sets, patches
and ``diff(old, new)``, whose patches applied to the old page give exactly the page a fresh PUT returns.
Shapes and rules: docs/protocol.md."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from doctordesk.screens.hashing import content_hash

Layout = Literal["desktop", "mobile"]
LAYOUTS: tuple[Layout, ...] = ("desktop", "mobile")

# Element attributes besides id, ref, type and children, with the defaults that are left out of the JSON.
ATTRIBUTE_DEFAULTS: dict[str, Any] = {
    "label": None,
    "value": None,
    "name": None,
    "placeholder": None,
    "options": None,
    "enabled": True,
    "visible": True,
    "highlighted": False,
    "error": None,
    "warning": None,
    "platform": None,
    "action": None,
    "props": None,
}
ATTRIBUTES = tuple(ATTRIBUTE_DEFAULTS)
_ON: Any = True
_OFF: Any = False


@dataclass(frozen=True, slots=True)
class Action:
    """What activating an element does: a request the generic client sends.

    ``form`` names the element whose subtree's named inputs are sent (None: the whole page); ``confirm`` is a
    question the client asks first.
    """

    method: Literal["PUT", "PATCH", "POST"]
    endpoint: str
    form: str | None = None
    confirm: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "endpoint": self.endpoint}
        if self.form is not None:
            out["form"] = self.form
        if self.confirm is not None:
            out["confirm"] = self.confirm
        return out


@dataclass(frozen=True, slots=True)
class Option:
    value: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"value": self.value, "label": self.label}


@dataclass(frozen=True, slots=True)
class Element:
    """One node of a screen. Types are the spec's (Spacer, Link, Regular, Scroller, Group, Attachment, Line, Caption,
    Edit, Upload, Combo, Date, Time, Section, Highlight, Card, Button) plus Heading, Text, Table, Row, Badge,
    Checkbox, Password, Hidden, Notice, Modal, Timezone and Chart (docs/protocol.md)."""

    ref: str
    type: str
    label: str | None = None
    value: Any = None
    name: str | None = None
    placeholder: str | None = None
    options: tuple[Option, ...] | None = None
    enabled: bool = True
    visible: bool = True
    highlighted: bool = False
    error: str | None = None
    warning: str | None = None
    platform: Layout | None = None
    action: Action | None = None
    props: dict[str, Any] | None = None
    children: tuple[Element, ...] = ()
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", self.ref)

    def to_json(self) -> dict[str, Any]:
        """The element as JSON: id, ref, type, then each attribute in ``ATTRIBUTES``' order that differs from its
        default, then the children. Spelled out attribute by attribute (a loop over ``ATTRIBUTES`` with
        ``getattr`` cost a third of a list render's serialization); ``test_protocol`` holds it to the table."""
        out: dict[str, Any] = {"id": self.id, "ref": self.ref, "type": self.type}
        if self.label is not None:
            out["label"] = self.label
        if self.value is not None:
            out["value"] = self.value
        if self.name is not None:
            out["name"] = self.name
        if self.placeholder is not None:
            out["placeholder"] = self.placeholder
        if self.options is not None:
            out["options"] = [o.to_json() for o in self.options]
        # Compared as the table's defaults are (``==``: a 1 from a database row is the default True).
        if self.enabled != _ON:
            out["enabled"] = self.enabled
        if self.visible != _ON:
            out["visible"] = self.visible
        if self.highlighted != _OFF:
            out["highlighted"] = self.highlighted
        if self.error is not None:
            out["error"] = self.error
        if self.warning is not None:
            out["warning"] = self.warning
        if self.platform is not None:
            out["platform"] = self.platform
        if self.action is not None:
            out["action"] = self.action.to_json()
        if self.props is not None:
            out["props"] = self.props
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


def el(ref: str, type: str, *children: Element, **attrs: Any) -> Element:
    """Shorthand used by the screen modules: ``el("send", "Link", label="Send", action=...)``."""
    if "options" in attrs and attrs["options"] is not None:
        attrs["options"] = tuple(attrs["options"])
    return Element(ref, type, children=tuple(children), **attrs)


def for_layout(elements: Iterable[Element], layout: Layout) -> tuple[Element, ...]:
    """Keep the elements meant for ``layout`` (the spec's D-1 desktop-only and M-1 mobile-only), recursively."""
    kept = []
    for e in elements:
        if e.platform is not None and e.platform != layout:
            continue
        if e.children:
            children = for_layout(e.children, layout)
            # An element whose subtree loses nothing is kept as it is (no copy of every container per render).
            if len(children) != len(e.children) or any(a is not b for a, b in zip(children, e.children, strict=True)):
                e = replace(e, children=children)
        kept.append(e)
    return tuple(kept)


def walk(elements: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every element of a JSON tree, depth first."""
    for e in elements:
        yield e
        yield from walk(e.get("children", ()))


def check_unique_ids(elements: Iterable[dict[str, Any]]) -> None:
    # A loop over a stack, not ``walk``'s nested generators: every render checks its whole page.
    seen: set[str] = set()
    stack = list(elements)
    while stack:
        e = stack.pop()
        element_id = e["id"]
        if element_id in seen:
            raise ValueError(f"element id {element_id!r} appears twice in one page")
        seen.add(element_id)
        children = e.get("children")
        if children:
            stack.extend(children)


@dataclass(slots=True)
class Page:
    """A whole screen, as PUT returns it."""

    screen: str
    title: str
    endpoint: str  # the PUT that produced it (a reload repeats it)
    poll: str  # the PATCH endpoint of the screen's poll cycle
    timeout: int  # seconds between polls
    elements: tuple[Element, ...]
    layout: Layout = "desktop"
    state: str = ""
    until: tuple[datetime | None] | None = None  # when time alone changes it (``state.lasting``), for the token
    _json: list[dict[str, Any]] | None = field(default=None, repr=False)

    def elements_json(self) -> list[dict[str, Any]]:
        if self._json is None:
            self._json = [e.to_json() for e in for_layout(self.elements, self.layout)]
            check_unique_ids(self._json)
        return self._json

    def content_hash(self) -> str:
        return content_hash(self.screen, self.title, self.poll, self.elements_json())

    def json_only(self) -> Page:
        """The same page held as its elements' JSON alone, without the element objects it was built from: what a
        page kept in memory for long is. Its JSON, hash and answers are the page's; the collector's full passes
        then walk a kept page's JSON containers only, not its element objects as well (docs/operations.md, One
        process)."""
        return replace(self, elements=(), _json=self.elements_json())

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "page",
            "screen": self.screen,
            "title": self.title,
            "endpoint": self.endpoint,
            "poll": self.poll,
            "timeout": self.timeout,
            "layout": self.layout,
            "state": self.state,
            "elements": self.elements_json(),
        }


@dataclass(slots=True)
class UpdateSet:
    """Changes to the active screen, as PATCH and a successful POST return them.

    ``navigate`` closes the active screen and names the PUT endpoint of the screen to show next; ``reload`` asks
    the client to PUT the current screen again; ``notice`` is a message to show ({"level", "text"}); ``leave``: the
    browser leaves the app for this http(s) address (a SMART launch's answer going back to the app).
    """

    screen: str
    state: str
    timeout: int
    patches: list[dict[str, Any]] = field(default_factory=list)
    navigate: str | None = None
    reload: bool = False
    notice: dict[str, str] | None = None
    leave: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "update",
            "screen": self.screen,
            "state": self.state,
            "timeout": self.timeout,
            "patches": self.patches,
        }
        optional = {
            "navigate": self.navigate,
            "reload": self.reload or None,
            "notice": self.notice,
            "leave": self.leave,
        }
        out.update({name: value for name, value in optional.items() if value is not None})
        return out

    @property
    def is_empty(self) -> bool:
        return not (self.patches or self.navigate or self.reload or self.notice or self.leave)


def error_body(
    code: str, message: str, status: int, *, fields: dict[str, str] | None = None, reload: bool = False
) -> dict[str, Any]:
    """The one error shape of every 4xx (and the 500 that should never happen)."""
    body: dict[str, Any] = {"kind": "error", "code": code, "message": message, "status": status, "fields": fields or {}}
    if reload:
        body["reload"] = True
    return body


# --- patches --------------------------------------------------------------------------------------------------


def p_add(element: dict[str, Any], *, parent: str | None, after: str | None) -> dict[str, Any]:
    return {"op": "add", "parent": parent, "after": after, "element": element}


def p_append(elements: list[dict[str, Any]], *, parent: str | None) -> dict[str, Any]:
    return {"op": "append", "parent": parent, "elements": elements}


def p_prepend(elements: list[dict[str, Any]], *, parent: str | None) -> dict[str, Any]:
    return {"op": "prepend", "parent": parent, "elements": elements}


def p_reset(elements: list[dict[str, Any]]) -> dict[str, Any]:
    """Replace the whole element tree (used when the client's old page is not known)."""
    return {"op": "reset", "elements": elements}


def p_replace(element: dict[str, Any]) -> dict[str, Any]:
    return {"op": "replace", "id": element["id"], "element": element}


def p_remove(element_id: str) -> dict[str, Any]:
    return {"op": "remove", "id": element_id}


def p_update(element_id: str, **changes: Any) -> dict[str, Any]:
    return {"op": "update", "id": element_id, "set": changes}


def _own(e: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in e.items() if k != "children"}


def diff(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Patches that turn the element list ``old`` into ``new`` (both JSON trees with unique ids).

    Two passes keep ids unique at every step, so a client that looks elements up by id never finds a stale twin:
    first every element that leaves its place is removed (gone, moved to another parent, out of order among its
    siblings, or its type changed), then the survivors are updated and the newcomers inserted. Among siblings the
    longest run that kept its relative order stays; the rest move by remove + insert.
    """
    patches: list[dict[str, Any]] = []
    old_list, new_list = list(old), list(new)
    _removals(old_list, new_list, patches)
    _insertions(None, old_list, new_list, patches)
    return patches


def _stable(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> set[str]:
    """Ids of the siblings that keep their place: in both lists with the same type and reference, in the longest
    subsequence of unchanged order. An element whose type or reference changed is removed and inserted anew, so
    none of its old descendants can linger beside their new copies."""
    new_pos = {e["id"]: i for i, e in enumerate(new)}
    positions = [new_pos[e["id"]] for e in old if e["id"] in new_pos and not _replaced(e, new[new_pos[e["id"]]])]
    if all(a < b for a, b in zip(positions, positions[1:], strict=False)):
        return {new[p]["id"] for p in positions}
    # Longest increasing subsequence (patience sorting), keeping back-links to rebuild it.
    tails: list[int] = []  # index into positions of the smallest tail of each length
    back: list[int] = [-1] * len(positions)
    for i, p in enumerate(positions):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if positions[tails[mid]] < p:
                lo = mid + 1
            else:
                hi = mid
        back[i] = tails[lo - 1] if lo else -1
        if lo == len(tails):
            tails.append(i)
        else:
            tails[lo] = i
    kept: set[str] = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        kept.add(new[positions[i]]["id"])
        i = back[i]
    return kept


def _replaced(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return bool(old["type"] != new["type"] or old["ref"] != new["ref"])


def _removals(old: list[dict[str, Any]], new: list[dict[str, Any]], patches: list[dict[str, Any]]) -> None:
    stable = _stable(old, new)
    new_by_id = {e["id"]: e for e in new if e["id"] in stable}
    for e in old:
        after = new_by_id.get(e["id"])
        if after is None:
            patches.append(p_remove(e["id"]))
        elif "children" in e and e != after:
            _removals(e["children"], after.get("children", []), patches)


def _insertions(
    parent: str | None, old: list[dict[str, Any]], new: list[dict[str, Any]], patches: list[dict[str, Any]]
) -> None:
    stable = _stable(old, new)
    old_by_id = {e["id"]: e for e in old if e["id"] in stable}
    kept = [i for i, e in enumerate(new) if e["id"] in old_by_id]
    if not kept:
        if new:
            patches.append(p_append(new, parent=parent))
        return
    first, last = kept[0], kept[-1]
    if first > 0:
        patches.append(p_prepend(new[:first], parent=parent))
    for i in range(first, last + 1):
        e = new[i]
        before = old_by_id.get(e["id"])
        if before is None:
            patches.append(p_add(e, parent=parent, after=new[i - 1]["id"]))
        else:
            _diff_element(before, e, patches)
    if last + 1 < len(new):
        patches.append(p_append(new[last + 1 :], parent=parent))


def _diff_element(old: dict[str, Any], new: dict[str, Any], patches: list[dict[str, Any]]) -> None:
    if old == new:
        return
    old_own, new_own = _own(old), _own(new)
    if old_own != new_own:
        changes = {k: new_own.get(k, ATTRIBUTE_DEFAULTS.get(k)) for k in old_own.keys() | new_own.keys()}
        changes = {k: v for k, v in changes.items() if old_own.get(k, ATTRIBUTE_DEFAULTS.get(k)) != v}
        if changes:
            patches.append(p_update(new["id"], **dict(sorted(changes.items()))))
    _insertions(new["id"], old.get("children", []), new.get("children", []), patches)


# --- applying patches (used by the Python client and the tests; the web client mirrors it) ---------------------


class PatchError(ValueError):
    """A patch names an element the page does not have, or is malformed."""


def apply(elements: list[dict[str, Any]], patches: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Apply ``patches`` to a copy of the element tree and return it (neither argument is changed)."""
    tree: list[dict[str, Any]] = copy.deepcopy(list(elements))
    for patch in patches:
        try:
            _apply_one(tree, copy.deepcopy(patch))
        except (KeyError, TypeError, AttributeError) as exc:
            raise PatchError(f"malformed patch {patch!r}") from exc
    return tree


def _find(
    tree: list[dict[str, Any]], element_id: str, parent: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int] | None:
    """(parent element, its children list, index) of the element ``element_id``, depth first."""
    for i, e in enumerate(tree):
        if e["id"] == element_id:
            return parent, tree, i
        children = e.get("children")
        if children:
            found = _find(children, element_id, e)
            if found is not None:
                return found
    return None


def _locate(tree: list[dict[str, Any]], element_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int]:
    found = _find(tree, element_id)
    if found is None:
        raise PatchError(f"no element {element_id!r}")
    return found


def _children_of(tree: list[dict[str, Any]], parent: str | None) -> list[dict[str, Any]]:
    if parent is None:
        return tree
    _, siblings, i = _locate(tree, parent)
    children: list[dict[str, Any]] = siblings[i].setdefault("children", [])
    return children


def _apply_one(tree: list[dict[str, Any]], patch: dict[str, Any]) -> None:
    op = patch["op"]
    if op == "add":
        children = _children_of(tree, patch.get("parent"))
        after = patch.get("after")
        if after is None:
            index = 0
        else:
            index = next((i + 1 for i, e in enumerate(children) if e["id"] == after), -1)
            if index < 0:
                raise PatchError(f"no sibling {after!r} to add after")
        children.insert(index, patch["element"])
    elif op == "append":
        _children_of(tree, patch.get("parent")).extend(patch["elements"])
    elif op == "prepend":
        children = _children_of(tree, patch.get("parent"))
        children[:0] = patch["elements"]
    elif op == "reset":
        tree[:] = patch["elements"]
    elif op == "replace":
        _, siblings, i = _locate(tree, patch["id"])
        siblings[i] = patch["element"]
    elif op == "remove":
        parent, siblings, i = _locate(tree, patch["id"])
        del siblings[i]
        if parent is not None and not siblings:
            del parent["children"]  # an element without children has no "children" key
    elif op == "update":
        _, siblings, i = _locate(tree, patch["id"])
        target = siblings[i]
        for key, value in patch["set"].items():
            if value == ATTRIBUTE_DEFAULTS.get(key, object()):
                target.pop(key, None)
            else:
                target[key] = value
    else:
        raise PatchError(f"unknown patch op {op!r}")
