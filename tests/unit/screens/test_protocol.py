"""The screen protocol core: element JSON, layouts, every patch op, and diff/apply (with generated pages)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctordesk.screens.hashing import canonical, content_hash, parts_of
from doctordesk.screens.protocol import (
    ATTRIBUTE_DEFAULTS,
    ATTRIBUTES,
    Action,
    Element,
    Option,
    Page,
    PatchError,
    UpdateSet,
    apply,
    diff,
    el,
    error_body,
    for_layout,
    p_add,
    p_append,
    p_prepend,
    p_remove,
    p_replace,
    p_reset,
    p_update,
    walk,
)

# --- element JSON ---------------------------------------------------------------------------------------------


def test_element_json_leaves_out_every_default():
    assert el("spacer", "Spacer").to_json() == {"id": "spacer", "ref": "spacer", "type": "Spacer"}


def test_element_json_carries_every_set_attribute_and_nested_children():
    element = el(
        "doctor~1",
        "Combo",
        el("hint", "Caption", value="Pick one"),
        label="Doctor",
        value="3",
        name="profile~1",
        placeholder="Choose",
        options=[Option("3", "Dr. Luis Romero")],
        enabled=False,
        visible=False,
        highlighted=True,
        error="Required.",
        warning="Out of network.",
        platform="desktop",
        action=Action("PATCH", "/x", form="alternative-1", confirm="Sure?"),
        props={"width": "90%"},
    )
    assert element.to_json() == {
        "id": "doctor~1",
        "ref": "doctor~1",
        "type": "Combo",
        "label": "Doctor",
        "value": "3",
        "name": "profile~1",
        "placeholder": "Choose",
        "options": [{"value": "3", "label": "Dr. Luis Romero"}],
        "enabled": False,
        "visible": False,
        "highlighted": True,
        "error": "Required.",
        "warning": "Out of network.",
        "platform": "desktop",
        "action": {"method": "PATCH", "endpoint": "/x", "form": "alternative-1", "confirm": "Sure?"},
        "props": {"width": "90%"},
        "children": [{"id": "hint", "ref": "hint", "type": "Caption", "value": "Pick one"}],
    }


def test_element_id_defaults_to_its_reference_and_can_differ_when_the_spec_reuses_a_reference():
    assert el("spacer", "Spacer").id == "spacer"
    assert el("spacer", "Spacer", id="spacer~out-17").to_json()["id"] == "spacer~out-17"


def test_action_json_leaves_out_form_and_confirm_when_absent():
    assert Action("PUT", "/profile/appointments").to_json() == {"method": "PUT", "endpoint": "/profile/appointments"}


def test_element_json_is_plain_json():
    page = el("a", "Group", el("b", "Link", action=Action("POST", "/p")), props={"n": 1})
    assert json.loads(json.dumps(page.to_json())) == page.to_json()


# --- layouts --------------------------------------------------------------------------------------------------


def _tree() -> tuple[Any, ...]:
    return (
        el("spacer", "Spacer", platform="desktop"),
        el("close", "Link", platform="desktop"),
        el("tag", "Regular", platform="mobile"),
        el(
            "scroll",
            "Scroller",
            el("incoming-1", "Group"),
            el("only-desktop", "Caption", platform="desktop"),
            el("only-mobile", "Caption", platform="mobile"),
        ),
        el("send", "Link"),
    )


def _ids(elements: Any) -> list[str]:
    out = []
    for e in elements:
        out.append(e.id)
        out.extend(_ids(e.children))
    return out


def test_desktop_layout_keeps_desktop_only_elements_and_drops_mobile_only_ones_at_every_level():
    assert _ids(for_layout(_tree(), "desktop")) == ["spacer", "close", "scroll", "incoming-1", "only-desktop", "send"]


def test_mobile_layout_keeps_mobile_only_elements_and_drops_desktop_only_ones_at_every_level():
    assert _ids(for_layout(_tree(), "mobile")) == ["tag", "scroll", "incoming-1", "only-mobile", "send"]


def test_a_page_renders_the_elements_of_its_layout():
    page = Page("chat", "Chat", "/c", "/c/poll", 5, _tree(), layout="mobile")
    body = page.to_json()
    assert body["layout"] == "mobile"
    assert [e["id"] for e in body["elements"]] == ["tag", "scroll", "send"]
    assert {"kind", "screen", "title", "endpoint", "poll", "timeout", "state", "elements"} <= body.keys()


def test_a_page_with_a_duplicate_element_id_is_refused():
    page = Page("s", "S", "/s", "/s", 30, (el("spacer", "Spacer"), el("g", "Group", el("spacer", "Spacer"))))
    with pytest.raises(ValueError, match="spacer"):
        page.to_json()


def test_the_content_hash_changes_with_the_content_and_not_with_the_state():
    a = Page("s", "S", "/s", "/s", 30, (el("x", "Regular", value="1"),))
    b = Page("s", "S", "/s", "/s", 30, (el("x", "Regular", value="2"),))
    c = Page("s", "S", "/s", "/s", 30, (el("x", "Regular", value="1"),), state="other")
    assert a.content_hash() != b.content_hash()
    assert a.content_hash() == c.content_hash()


# --- update sets and errors -----------------------------------------------------------------------------------


def test_an_update_set_without_changes_is_empty_and_carries_state_and_timeout():
    update = UpdateSet(screen="s", state="t", timeout=30)
    assert update.is_empty
    assert update.to_json() == {"kind": "update", "screen": "s", "state": "t", "timeout": 30, "patches": []}


def test_an_update_set_can_close_the_screen_ask_for_a_reload_and_show_a_notice():
    update = UpdateSet(
        screen="s", state="t", timeout=30, navigate="/profile/appointments", reload=True, notice={"level": "info"}
    )
    assert not update.is_empty
    body = update.to_json()
    assert (
        body["navigate"] == "/profile/appointments" and body["reload"] is True and body["notice"] == {"level": "info"}
    )


def test_the_error_shape_has_code_message_status_and_fields():
    assert error_body("NOT_FOUND", "Not found.", 404) == {
        "kind": "error",
        "code": "NOT_FOUND",
        "message": "Not found.",
        "status": 404,
        "fields": {},
    }
    body = error_body("APPOINTMENT_CHANGED", "Reload.", 409, fields={"x": "y"}, reload=True)
    assert body["reload"] is True and body["fields"] == {"x": "y"}


# --- every patch op -------------------------------------------------------------------------------------------


def E(id_: str, *children: dict[str, Any], **attrs: Any) -> dict[str, Any]:  # noqa: N802
    out: dict[str, Any] = {"id": id_, "ref": id_, "type": attrs.pop("type", "Group"), **attrs}
    if children:
        out["children"] = list(children)
    return out


BASE = [E("a"), E("b", E("b1"), E("b2")), E("c")]


def test_add_inserts_after_the_named_sibling():
    assert apply(BASE, [p_add(E("x"), parent="b", after="b1")])[1] == E("b", E("b1"), E("x"), E("b2"))


def test_add_without_a_sibling_inserts_first_and_at_the_top_level_without_a_parent():
    assert [e["id"] for e in apply(BASE, [p_add(E("x"), parent=None, after=None)])] == ["x", "a", "b", "c"]


def test_add_into_an_element_without_children_creates_them():
    assert apply(BASE, [p_add(E("x"), parent="a", after=None)])[0] == E("a", E("x"))


def test_append_and_prepend_add_at_the_end_and_the_start_of_the_children():
    tree = apply(BASE, [p_append([E("y"), E("z")], parent="b"), p_prepend([E("w")], parent="b")])
    assert [e["id"] for e in tree[1]["children"]] == ["w", "b1", "b2", "y", "z"]
    assert [e["id"] for e in apply(BASE, [p_append([E("z")], parent=None)])] == ["a", "b", "c", "z"]


def test_replace_puts_the_new_element_where_the_old_one_was():
    assert apply(BASE, [p_replace(E("b1", type="Link", label="x"))])[1]["children"][0] == E(
        "b1", type="Link", label="x"
    )


def test_remove_drops_the_element_and_an_emptied_children_list():
    tree = apply(BASE, [p_remove("b1"), p_remove("b2"), p_remove("c")])
    assert tree == [E("a"), E("b")]


def test_update_sets_keys_and_a_key_set_to_its_default_disappears():
    tree = apply([E("a", label="x", enabled=False)], [p_update("a", label="y", enabled=True, error="bad")])
    assert tree == [E("a", label="y", error="bad")]


def test_reset_replaces_the_whole_tree():
    assert apply(BASE, [p_reset([E("only")])]) == [E("only")]


def test_patches_apply_in_order_and_leave_their_inputs_unchanged():
    before = copy.deepcopy(BASE)
    patches = [p_append([E("x")], parent="a"), p_update("x", label="later")]
    kept = copy.deepcopy(patches)
    assert apply(BASE, patches)[0] == E("a", E("x", label="later"))
    assert BASE == before and patches == kept


@pytest.mark.parametrize(
    "patch",
    [
        p_remove("nope"),
        p_update("nope", label="x"),
        p_replace(E("nope")),
        p_append([E("x")], parent="nope"),
        p_add(E("x"), parent="b", after="nope"),
        {"op": "explode"},
        {"op": "remove"},
    ],
)
def test_a_patch_naming_a_missing_element_or_malformed_is_refused(patch):
    with pytest.raises(PatchError):
        apply(BASE, [patch])


# --- diff -----------------------------------------------------------------------------------------------------


def test_diff_of_equal_pages_is_empty():
    assert diff(BASE, copy.deepcopy(BASE)) == []


def test_diff_of_an_attribute_change_is_one_update():
    new = copy.deepcopy(BASE)
    new[1]["children"][1]["label"] = "changed"
    assert diff(BASE, new) == [p_update("b2", label="changed")]


def test_diff_of_an_attribute_back_to_its_default_sets_the_default():
    assert diff([E("a", enabled=False)], [E("a")]) == [p_update("a", enabled=True)]


def test_diff_uses_prepend_add_and_append_for_new_siblings():
    new = [E("s"), E("a"), E("m"), E("b", E("b1"), E("b2")), E("c"), E("e")]
    assert diff(BASE, new) == [
        p_prepend([E("s")], parent=None),
        p_add(E("m"), parent=None, after="a"),
        p_append([E("e")], parent=None),
    ]


def test_diff_of_a_type_change_removes_and_inserts_the_element():
    assert diff([E("a"), E("b")], [E("a", type="Link"), E("b")]) == [
        p_remove("a"),
        p_prepend([E("a", type="Link")], parent=None),
    ]


def test_diff_moves_an_element_to_another_parent_without_ever_duplicating_its_id():
    old = [E("q"), E("p", E("x"))]
    new = [E("q", E("x")), E("p")]
    assert diff(old, new) == [p_remove("x"), p_append([E("x")], parent="q")]  # removed before it is inserted


def test_diff_of_a_reorder_moves_only_what_left_the_longest_ordered_run():
    old = [E(x) for x in "abcdef"]
    new = [E(x) for x in "bcdefa"]
    assert diff(old, new) == [p_remove("a"), p_append([E("a")], parent=None)]


# --- the property: apply(old, diff(old, new)) == new, for generated pages ------------------------------------

TYPES = ("Group", "Link", "Regular", "Card", "Section")


@dataclass
class Node:
    id: str
    type: str = "Group"
    label: str | None = None
    enabled: bool = True
    highlighted: bool = False
    value: Any = None
    props: dict[str, Any] | None = None
    children: list[Node] = field(default_factory=list)

    def element(self) -> Any:
        return el(
            self.id,
            self.type,
            *(c.element() for c in self.children),
            label=self.label,
            enabled=self.enabled,
            highlighted=self.highlighted,
            value=self.value,
            props=self.props,
        )


def _all(nodes: list[Node]) -> list[Node]:
    out = []
    for n in nodes:
        out.append(n)
        out.extend(_all(n.children))
    return out


def _json(nodes: list[Node]) -> list[dict[str, Any]]:
    return Page("s", "S", "/s", "/s", 30, tuple(n.element() for n in nodes)).elements_json()


@st.composite
def trees(draw: st.DrawFn, counter: list[int], *, max_size: int = 12, depth: int = 3) -> list[Node]:
    size = draw(st.integers(0, max_size))
    nodes = []
    for _ in range(size):
        counter[0] += 1
        node = Node(
            f"e{counter[0]}",
            type=draw(st.sampled_from(TYPES)),
            label=draw(st.sampled_from([None, "x", "y"])),
            enabled=draw(st.booleans()),
        )
        if depth > 1 and draw(st.integers(0, 3)) == 0:
            node.children = draw(trees(counter, max_size=4, depth=depth - 1))
        nodes.append(node)
    return nodes


def _parents(roots: list[Node]) -> list[list[Node]]:
    """Every children list of the tree (the top level first)."""
    return [roots] + [n.children for n in _all(roots)]


def _mutate(draw: st.DrawFn, roots: list[Node], counter: list[int]) -> None:
    op = draw(st.sampled_from(["attr", "type", "insert", "remove", "reorder", "move", "nest"]))
    everything = _all(roots)
    if op == "attr" and everything:
        node = draw(st.sampled_from(everything))
        key = draw(st.sampled_from(["label", "enabled", "highlighted", "value", "props"]))
        value = {
            "label": st.sampled_from([None, "x", "z"]),
            "enabled": st.booleans(),
            "highlighted": st.booleans(),
            "value": st.sampled_from([None, "1", 2, "2026-11-23"]),
            "props": st.sampled_from([None, {"width": "90%"}, {"tone": "info", "n": 2}]),
        }[key]
        setattr(node, key, draw(value))
    elif op == "type" and everything:
        draw(st.sampled_from(everything)).type = draw(st.sampled_from(TYPES))
    elif op == "insert":
        siblings = draw(st.sampled_from(_parents(roots)))
        where = draw(st.sampled_from(["start", "middle", "end"]))
        index = {"start": 0, "middle": len(siblings) // 2, "end": len(siblings)}[where]
        counter[0] += 1
        new = Node(f"e{counter[0]}", type=draw(st.sampled_from(TYPES)))
        if draw(st.booleans()):
            new.children = draw(trees(counter, max_size=3, depth=2))
        siblings.insert(index, new)
    elif op == "remove" and everything:
        siblings = draw(st.sampled_from([p for p in _parents(roots) if p]))
        del siblings[draw(st.integers(0, len(siblings) - 1))]
    elif op == "reorder":
        siblings = draw(st.sampled_from(_parents(roots)))
        siblings[:] = draw(st.permutations(siblings))
    elif op == "move" and everything:
        node = draw(st.sampled_from(everything))
        for siblings in _parents(roots):
            if node in siblings:
                siblings.remove(node)
                break
        targets = [roots] + [n.children for n in _all(roots)]
        target = draw(st.sampled_from(targets))
        target.insert(draw(st.integers(0, len(target))), node)
    elif op == "nest" and everything:
        # a whole subtree changes parent and gains a sibling
        node = draw(st.sampled_from(everything))
        counter[0] += 1
        node.children.append(Node(f"e{counter[0]}"))


@st.composite
def page_pairs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    counter = [0]
    roots = draw(trees(counter))
    old = _json(roots)
    for _ in range(draw(st.integers(0, 8))):
        _mutate(draw, roots, counter)
    return old, _json(roots)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page_pairs())
def test_applying_the_diff_of_two_pages_to_the_old_page_gives_the_new_page(pair):
    old, new = pair
    kept_old, kept_new = copy.deepcopy(old), copy.deepcopy(new)
    patches = diff(old, new)
    assert apply(old, patches) == new
    assert old == kept_old and new == kept_new
    assert json.loads(json.dumps(patches)) == patches
    if old == new:
        assert patches == []


@st.composite
def unrelated_pairs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two pages drawing ids from one small pool: every kind of move, nesting and reordering at once."""
    pool = [f"e{i}" for i in range(10)]

    def tree(available: list[str], depth: int) -> list[Node]:
        nodes = []
        for _ in range(draw(st.integers(0, 4))):
            if not available:
                break
            node = Node(available.pop(draw(st.integers(0, len(available) - 1))), type=draw(st.sampled_from(TYPES[:2])))
            if depth > 0 and draw(st.booleans()):
                node.children = tree(available, depth - 1)
            nodes.append(node)
        return nodes

    return _json(tree(list(pool), 2)), _json(tree(list(pool), 2))


@settings(max_examples=300, deadline=None)
@given(unrelated_pairs())
def test_the_diff_holds_for_pages_that_share_ids_in_any_arrangement(pair):
    old, new = pair
    assert apply(old, diff(old, new)) == new


@settings(max_examples=200, deadline=None)
@given(unrelated_pairs())
def test_every_intermediate_tree_of_a_diff_has_unique_ids(pair):
    old, new = pair
    tree = old
    for patch in diff(old, new):
        tree = apply(tree, [patch])
        ids = [e["id"] for e in _walk(tree)]
        assert len(ids) == len(set(ids)), patch


def _walk(tree: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in tree:
        out.append(e)
        out.extend(_walk(e.get("children", [])))
    return out


@settings(max_examples=300, deadline=None)
@given(page_pairs(), st.data())
def test_a_hash_from_known_parts_is_the_pages_hash(pair, data):
    """Whatever elements' canonical JSON is taken from ``parts`` (any subset, at any depth), the hash is the one a
    whole serialization gives."""
    _, page = pair
    nodes = list(walk(page))
    chosen = data.draw(st.lists(st.sampled_from(nodes), unique_by=id) if nodes else st.just([]))
    parts = parts_of(chosen, None)
    assert content_hash("s", "T ü", "/poll", page, parts=parts) == content_hash("s", "T ü", "/poll", page)
    wrong = {**parts, id(nodes[0]): canonical({"not": "it"})} if nodes else {}
    if nodes:
        assert content_hash("s", "T ü", "/poll", page, parts=wrong) != content_hash("s", "T ü", "/poll", page)


def _by_the_table(e: Element) -> dict[str, Any]:
    """``Element.to_json`` as the attribute table says it: every attribute that differs from its default, in order."""
    out: dict[str, Any] = {"id": e.id, "ref": e.ref, "type": e.type}
    for name in ATTRIBUTES:
        value = getattr(e, name)
        if value == ATTRIBUTE_DEFAULTS[name]:
            continue
        out[name] = (
            [o.to_json() for o in value] if name == "options" else value.to_json() if name == "action" else value
        )
    if e.children:
        out["children"] = [_by_the_table(c) for c in e.children]
    return out


def test_an_elements_json_keeps_every_attribute_off_its_default_in_the_tables_order() -> None:
    others: dict[str, Any] = {
        "label": "L",
        "value": 0,
        "name": "n",
        "placeholder": "p",
        "options": (Option("a", "A"),),
        "enabled": False,
        "visible": False,
        "highlighted": True,
        "error": "e",
        "warning": "w",
        "platform": "mobile",
        "action": Action("POST", "/x", form="f"),
        "props": {},
    }
    assert set(others) == set(ATTRIBUTES)
    everything = Element("all", "Card", **others, children=(el("child", "Text", value=""),))
    assert list(everything.to_json()) == ["id", "ref", "type", *ATTRIBUTES, "children"]
    assert everything.to_json() == _by_the_table(everything)
    for name, value in others.items():
        one = Element("one", "Text", **{name: value})
        assert list(one.to_json().items()) == list(_by_the_table(one).items()), name
    # Defaults as the table compares them: a 1 or 0 read from a database row is the default True or False.
    assert Element("d", "Text", enabled=1, visible=1, highlighted=0).to_json() == {
        "id": "d",
        "ref": "d",
        "type": "Text",
    }
