// The Modal element: a native <dialog>, open while the model is visible. Focus moves into it and back to where it
// was. Escape activates the control the model names in props.cancel (its own "Back"), so the server closes it too;
// without one, Escape closes it on this client only.

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
  let cancelled = null;
  root.addEventListener("cancel", (event) => {
    event.preventDefault();
    const current = view.nodes.get(model.id) || entry;
    cancelled = view.nodes.get((current.model.props || {}).cancel) || null;
    current.model.visible = false;
    root.close();
  });
  root.addEventListener("close", () => {
    if (view.lastFocus) view.refocus(view.lastFocus);
    // After focus is back: the cancel control's request runs in the screen's queue like any other action.
    const cancel = cancelled;
    cancelled = null;
    if (cancel && cancel.model.action && cancel.model.enabled !== false) view.onAction(cancel.model, view);
  });
  return { root, host, messages };
}

// Opens or closes the dialog to match its model (after every render and update set).
export function syncModal(view, entry) {
  const dialog = entry.root;
  const show = entry.model.visible !== false;
  if (show && !dialog.open && dialog.isConnected) {
    // The control that opened it (by id: an update may rebuild its node meanwhile). While its request ran the
    // control was disabled and focus fell to the page, so the last activated element stands in for it.
    const holder = document.activeElement && document.activeElement.closest("[data-id]");
    view.lastFocus = holder && !dialog.contains(holder) ? holder.dataset.id : view.lastActivated;
    dialog.showModal();
  } else if (!show && dialog.open) {
    dialog.close();
  }
}

// An action's `confirm` question, asked in the page (not the browser's window.confirm, whose buttons and look the
// app cannot name or translate): a modal <dialog> titled with the question, its confirm button named like the
// control that asked ("Accept this time"), and "Back". Escape or Back answer no; focus returns to the control.
export function askToConfirm(question, { confirm, back }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const dialog = node("dialog", "modal confirm");
    const title = node("h2", "modal-title", question);
    title.id = uid("h");
    dialog.setAttribute("aria-labelledby", title.id);
    const yes = node("button", "btn btn-primary confirm-yes", confirm);
    yes.type = "button";
    const no = node("button", "btn confirm-no", back);
    no.type = "button";
    const actions = node("div", "confirm-actions");
    actions.append(yes, no);
    dialog.append(title, actions);
    let answer = false;
    yes.addEventListener("click", () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    yes.focus();
  });
}
