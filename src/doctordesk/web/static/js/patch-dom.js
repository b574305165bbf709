// The DOM side of the patch operations (patch.js applies them to the element tree): each patch changes the page's
// nodes in place, so what the user typed, where they scrolled and what has focus survive an update set.

import { applyOne, PatchError } from "./patch.js";
import { showDraft } from "./attachments.js";
import { readControl, writeControl } from "./forms.js";
import { captureAnchors, stickyBottom } from "./scroll.js";

// Applies the patches in order to the view's tree and DOM. Throws PatchError when a patch does not fit the page.
export function applyPatches(view, patches) {
  // Older items prepended (load more) must not move what the user is reading: anchor on it.
  const anchors = patches.some((p) => p.op === "prepend") ? captureAnchors(view.root) : [];
  for (const patch of patches) {
    const stick = patch.op === "append" || patch.op === "add" ? stickyBottom(view, patch.parent) : null;
    applyOne(view.elements, patch);
    applyDom(view, patch);
    if (stick) stick();
  }
  for (const restore of anchors) restore();
}

function hostOf(view, parent) {
  if (parent === null || parent === undefined) return { host: view.root, depth: 0 };
  const entry = view.nodes.get(parent);
  if (!entry) throw new PatchError(`no element ${parent}`);
  return { host: entry.host, depth: entry.depth + 1 };
}

function applyDom(view, patch) {
  switch (patch.op) {
    case "add": {
      const { host, depth } = hostOf(view, patch.parent);
      const built = view.build(view.model(patch.element.id), depth);
      if (patch.after === null || patch.after === undefined) host.prepend(built);
      else view.nodes.get(patch.after).root.after(built);
      break;
    }
    case "append":
    case "prepend": {
      const { host, depth } = hostOf(view, patch.parent);
      const built = patch.elements.map((e) => view.build(view.model(e.id), depth));
      if (patch.op === "append") host.append(...built);
      else host.prepend(...built);
      break;
    }
    case "reset":
      // The server no longer knows the page shown (a restart, another instance): a whole new tree, but what the
      // user was typing stays.
      view.rerender(view.elements);
      break;
    case "replace": {
      const old = view.nodes.get(patch.id);
      const focused = old.root.contains(document.activeElement);
      view.forget(patch.id);
      const built = view.build(view.model(patch.element.id), old.depth);
      old.root.replaceWith(built);
      if (focused) view.refocus(patch.element.id);
      break;
    }
    case "remove": {
      const old = view.nodes.get(patch.id);
      const focused = old.root.contains(document.activeElement);
      view.forget(patch.id);
      old.root.remove();
      if (focused) view.root.dispatchEvent(new CustomEvent("focuslost", { bubbles: true }));
      break;
    }
    case "update":
      refresh(view, patch.id, patch.set);
      break;
    default:
      throw new PatchError(`unknown patch op ${patch.op}`);
  }
}

// Rebuilds one element's own node after an update, keeping its children's DOM (and what the user typed in it when
// the update does not set a value).
function refresh(view, id, changes) {
  const old = view.nodes.get(id);
  if (!old) throw new PatchError(`no element ${id}`);
  const model = view.model(id);
  const focused = old.root.contains(document.activeElement) && !old.host.contains(document.activeElement);
  const typed = old.control && !("value" in changes) ? readControl(old) : undefined;
  const keptFile = old.file;
  const entry = view.buildOwn(model, old.depth);
  for (const child of model.children || []) {
    const childEntry = view.nodes.get(child.id);
    if (childEntry) entry.host.append(childEntry.root);
  }
  old.root.replaceWith(entry.root);
  view.nodes.set(id, entry);
  if (typed !== undefined && entry.control) writeControl(entry, typed);
  if (keptFile && entry.control && entry.control.type === "file" && !("value" in changes)) {
    entry.file = keptFile;
    showDraft(entry);
  }
  if (focused) view.refocus(id);
}
