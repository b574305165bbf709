// The Modal element: a native <dialog>, open while the model is visible. Focus moves into it and back to where it
// was; Escape closes it on this client only (the server shows it again when it says so).

import { node, uid } from "./dom.js";

export function buildModal(model, { entry, view }) {
  const root = document.createElement("dialog");
  root.className = "modal";
  const title = node("h2", "modal-title", model.label || "");
  title.id = uid("h");
  root.setAttribute("aria-labelledby", title.id);
  const messages = node("div", "messages");
  const host = node("div", "modal-body");
  root.append(title);
  if (model.value !== null && model.value !== undefined) root.append(node("p", "modal-text", model.value));
  root.append(messages, host);
  root.addEventListener("cancel", (event) => {
    event.preventDefault();
    const current = view.nodes.get(model.id) || entry;
    current.model.visible = false;
    root.close();
  });
  root.addEventListener("close", () => {
    if (view.lastFocus && view.lastFocus.isConnected) view.lastFocus.focus();
  });
  return { root, host, messages };
}

// Opens or closes the dialog to match its model (after every render and update set).
export function syncModal(view, entry) {
  const dialog = entry.root;
  const show = entry.model.visible !== false;
  if (show && !dialog.open && dialog.isConnected) {
    view.lastFocus = document.activeElement;
    dialog.showModal();
  } else if (!show && dialog.open) {
    dialog.close();
  }
}
