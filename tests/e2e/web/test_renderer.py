"""The browser's patch application and renderer against the Python protocol: for generated pages, the update set
`diff(old, new)` applied by patch.js gives the same tree as protocol.apply, and the DOM the renderer patches in
place equals the DOM of a fresh render of the new page."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from doctordesk.screens.protocol import apply, diff

pytestmark = pytest.mark.browser

TYPES = [
    "Section",
    "Card",
    "Group",
    "Row",
    "Regular",
    "Text",
    "Caption",
    "Badge",
    "Link",
    "Button",
    "Edit",
    "Date",
    "Time",
    "Combo",
    "Checkbox",
    "Hidden",
    "Highlight",
    "Notice",
    "Spacer",
    "Line",
    "Heading",
    "Scroller",
]
CONTAINERS = {"Section", "Card", "Group", "Row", "Notice", "Scroller"}


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counter = 0

    def element(self, depth: int) -> dict[str, Any]:
        rng = self.rng
        self.counter += 1
        kind = rng.choice(TYPES)
        e: dict[str, Any] = {"id": f"e{self.counter}", "ref": f"r{self.counter}", "type": kind}
        self.attributes(e)
        if kind in CONTAINERS and depth < 3 and rng.random() < 0.7:
            e["children"] = [self.element(depth + 1) for _ in range(rng.randint(1, 4))]
        return e

    def attributes(self, e: dict[str, Any]) -> None:
        rng = self.rng
        if rng.random() < 0.6:
            e["label"] = rng.choice(["Date", "Doctor", "<b>bold</b>", "Notes & more", "Fee"])
        if rng.random() < 0.6:
            e["value"] = rng.choice(["2026-11-25", "09:30", "<img src=x onerror=alert(1)>", "3", "plain"])
        if e["type"] in {"Edit", "Date", "Time", "Combo", "Checkbox", "Hidden"} and rng.random() < 0.7:
            e["name"] = f"n-{e['id']}"
        if e["type"] == "Combo":
            e["options"] = [{"value": "3", "label": "Dr. Romero"}, {"value": "4", "label": "Dr. Chen"}]
        for key, value in (("enabled", False), ("visible", False), ("highlighted", True)):
            if rng.random() < 0.15:
                e[key] = value
        if rng.random() < 0.15:
            e["error"] = "Required."
        if rng.random() < 0.1:
            e["warning"] = "Out of network."
        if rng.random() < 0.1:
            e["props"] = {"tone": rng.choice(["info", "warning"]), "width": "90%"}

    def mutate(self, elements: list[dict[str, Any]], depth: int = 0) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        for e in elements:
            roll = rng.random()
            if roll < 0.12:
                continue  # removed
            e = dict(e)
            if roll < 0.3:
                for key in ("label", "value", "enabled", "visible", "highlighted", "error", "warning", "props"):
                    e.pop(key, None)
                self.attributes(e)
            elif roll < 0.36:
                e = self.element(depth)  # a different element in its place
            if "children" in e:
                children = self.mutate(e["children"], depth + 1)
                if children:
                    e["children"] = children
                else:
                    del e["children"]
            out.append(e)
            if rng.random() < 0.12:
                out.append(self.element(depth))
        if rng.random() < 0.15:
            out.insert(0, self.element(depth))
        if len(out) > 1 and rng.random() < 0.05:
            rng.shuffle(out)
        return out


def cases(count: int) -> list[dict[str, Any]]:
    result = []
    for seed in range(count):
        g = Generator(seed)
        old = [g.element(0) for _ in range(g.rng.randint(1, 5))]
        new = g.mutate(old)
        patches = diff(old, new)
        expected = apply(old, patches)
        assert expected == new
        result.append({"old": old, "patches": patches, "expected": expected})
    return result


RUN_CASES = """
async (cases) => {
  const { apply } = await import("/js/patch.js");
  const { ScreenView } = await import("/js/render.js");
  const serialize = (root) => {
    const out = [];
    const visit = (n, depth) => {
      if (n.nodeType === Node.TEXT_NODE) { if (n.textContent.trim()) out.push(depth + " #" + n.textContent); return; }
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      const attrs = ["data-id", "class", "hidden", "disabled", "aria-invalid", "role", "type", "data-name"]
        .map((a) => n.hasAttribute(a) ? a + "=" + n.getAttribute(a) : "").filter(Boolean).join(" ");
      const value = "value" in n && n.type !== "file" ? " value=" + n.value : "";
      const checked = n.type === "checkbox" ? " checked=" + n.checked : "";
      out.push(depth + " <" + n.tagName + " " + attrs + value + checked + ">");
      for (const c of n.childNodes) visit(c, depth + 1);
    };
    for (const c of root.childNodes) visit(c, 0);
    return out.join("\\n");
  };
  const failures = [];
  const noop = { onAction() {}, onNotice() {} };
  cases.forEach((c, i) => {
    const got = apply(c.old, c.patches);
    if (JSON.stringify(got) !== JSON.stringify(c.expected)) failures.push({ i, kind: "model" });
    const a = document.createElement("div");
    const b = document.createElement("div");
    document.body.append(a, b);
    const patched = new ScreenView(a, noop);
    patched.render(c.old);
    patched.applyPatches(c.patches);
    const fresh = new ScreenView(b, noop);
    fresh.render(c.expected);
    if (JSON.stringify(patched.elements) !== JSON.stringify(c.expected)) failures.push({ i, kind: "view model" });
    const sa = serialize(a), sb = serialize(b);
    if (sa !== sb) failures.push({ i, kind: "dom", patched: sa, fresh: sb });
    a.remove();
    b.remove();
  });
  return failures;
}
"""


def test_patches_applied_in_the_browser_give_the_tree_and_dom_of_a_fresh_render(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    generated = cases(300)
    failures = page.evaluate(RUN_CASES, json.loads(json.dumps(generated)))
    assert failures == [], json.dumps(failures[:2], indent=1)[:4000]


SCENARIOS = """
async () => {
  const { applyOne, PatchError } = await import("/js/patch.js");
  const errors = [];
  for (const patch of [{op: "remove", id: "nope"}, {op: "update", id: "nope", set: {}}, {op: "bogus"},
                       {op: "add", parent: null, after: "nope", element: {id: "x", ref: "x", type: "Text"}}]) {
    try { applyOne([{id: "a", ref: "a", type: "Text"}], patch); errors.push("accepted " + patch.op); }
    catch (e) { if (!(e instanceof PatchError)) errors.push("wrong error " + e); }
  }
  return errors;
}
"""


def test_a_patch_naming_an_unknown_element_is_refused_like_in_python(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    assert page.evaluate(SCENARIOS) == []


XSS = """
async (elements) => {
  const { ScreenView } = await import("/js/render.js");
  const root = document.createElement("div");
  document.body.append(root);
  window.__xss = 0;
  new ScreenView(root, { onAction() {}, onNotice() {} }).render(elements);
  await new Promise((r) => setTimeout(r, 300));
  const count = (selector) => root.querySelectorAll(selector).length;
  return { fired: window.__xss, images: count("img"), scripts: count("script"), text: root.textContent };
}
"""


def test_markup_in_server_data_renders_as_text(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    payloads = ["<script>window.__xss++</script>", '<img src=x onerror="window.__xss++">']
    elements = [
        {"id": f"e{i}", "ref": f"e{i}", "type": t, "label": p, "value": p}
        for i, (t, p) in enumerate((t, p) for t in ("Text", "Group", "Regular", "Link", "Card") for p in payloads)
    ]
    result = page.evaluate(XSS, elements)
    assert result["fired"] == 0 and result["images"] == 0 and result["scripts"] == 0
    assert "<script>window.__xss++</script>" in result["text"]
