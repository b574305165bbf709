// A section the page folds (`props.fold`, the appointment list's filter): its title is a disclosure button that
// shows or hides its body. The view remembers which folds the user opened, so a reload of the same screen keeps
// them open; another screen starts folded. A field in error inside a folded body opens it, so the message is seen.

import { node, uid } from "./dom.js";

export function makeFoldable(parts, model, view) {
  const title = parts.root.querySelector(":scope > .section-title");
  if (!title) return parts;
  const button = node("button", "fold-toggle", model.label);
  button.type = "button";
  parts.host.id = uid("fold");
  button.setAttribute("aria-controls", parts.host.id);
  title.replaceChildren(button);
  const entry = { ...parts, fold: button };
  setOpen(entry, view.unfolded.has(model.id));
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    setOpen(entry, open);
    if (open) view.unfolded.add(model.id);
    else view.unfolded.delete(model.id);
    if (open) parts.host.querySelector("input, select, textarea, button")?.focus();
  });
  return entry;
}

function setOpen(entry, open) {
  entry.fold.setAttribute("aria-expanded", String(open));
  entry.host.hidden = !open;
  entry.root.dataset.folded = String(!open);
}

// After a render or an error: a folded section holding a field in error opens.
export function openOnErrors(view) {
  for (const [id, entry] of view.nodes) {
    if (!entry.fold || !entry.host.hidden) continue;
    if (!entry.host.querySelector('[aria-invalid="true"]')) continue;
    setOpen(entry, true);
    view.unfolded.add(id);
  }
}
