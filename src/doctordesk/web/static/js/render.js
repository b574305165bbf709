// The generic renderer: turns the element tree of a page into DOM and keeps it in step with update sets.
// It knows the element types and attributes of docs/protocol.md and nothing about particular screens.
// Server data only ever reaches the DOM through textContent, attribute values and form control values.
//
// ScreenView holds the page's tree and an entry per element ({model, root, host, control?, button?, messages?,
// depth}); the element builders (elements.js, attachments.js, dialogs.js), the DOM side of patches (patch-dom.js)
// and the forms (forms.js) work on it.

import { buildAttachment, buildUpload } from "./attachments.js";
import { buildCalendar, buildDay, buildEvent } from "./calendar.js";
import { buildChart } from "./charts.js";
import { buildModal, syncModal } from "./dialogs.js";
import { node, uid } from "./dom.js";
import { buildGeneric, ELEMENT_BUILDERS } from "./elements.js";
import { openOnErrors } from "./fold.js";
import * as forms from "./forms.js";
import { find } from "./patch.js";
import { applyPatches } from "./patch-dom.js";

const BUILDERS = {
  ...ELEMENT_BUILDERS,
  Upload: buildUpload,
  Attachment: buildAttachment,
  Modal: buildModal,
  Calendar: buildCalendar,
  Day: buildDay,
  Event: buildEvent,
  Chart: buildChart,
};
// Elements whose own node cannot hold children: theirs go into a detached host.
const VOID_TAGS = new Set(["INPUT", "HR", "BUTTON", "A", "SELECT", "TEXTAREA", "IMG"]);
const WIDTH = /^(100|[1-9]?[0-9])%$/;

// Renders one page's elements into `root` and applies patches to both the model and the DOM.
export class ScreenView {
  constructor(root, { onAction, onNotice, onDraft }) {
    this.root = root;
    this.onAction = onAction;
    this.onDraft = onDraft || null; // an input with props.draft: its text is kept with the server (screen.js)
    this.rendering = false; // true while a whole page is built (not for a patch rebuilding one element)
    this.onNotice = onNotice || (() => {});
    this.elements = [];
    this.nodes = new Map(); // element id -> its entry
    this.blobUrls = new Set();
    this.lastFocus = null; // the element id focus returns to when a dialog closes
    this.lastActivated = null; // the element whose action ran last
    this.unfolded = new Set(); // folded sections the user opened (fold.js), kept while the screen is the same
  }

  destroy() {
    for (const url of this.blobUrls) URL.revokeObjectURL(url);
    this.blobUrls.clear();
    this.nodes.clear();
    this.root.replaceChildren();
  }

  render(elements, { unfolded = new Set() } = {}) {
    this.unfolded = unfolded;
    for (const url of this.blobUrls) URL.revokeObjectURL(url);
    this.blobUrls.clear();
    this.nodes.clear();
    this.elements = structuredClone(elements);
    this.rendering = true;
    try {
      this.root.replaceChildren(...this.elements.map((e) => this.build(e, 0)));
    } finally {
      this.rendering = false;
    }
    this.afterChange();
  }

  // A new tree for the screen already shown (a reload, a reset patch): the inputs the server did not change keep
  // what the user typed, and the element that had focus keeps it.
  rerender(elements) {
    const typed = forms.typedValues(this);
    const active = this.root.contains(document.activeElement) ? document.activeElement.closest("[data-id]") : null;
    this.render(elements, { unfolded: this.unfolded });
    forms.restoreTyped(this, typed);
    if (active) this.refocus(active.dataset.id);
    this.afterChange();
  }

  model(id) {
    const hit = find(this.elements, id);
    return hit ? hit[0][hit[1]] : null;
  }

  // Applies the patches in order (model and DOM). Throws PatchError when a patch does not fit the page.
  applyPatches(patches) {
    applyPatches(this, patches);
    this.afterChange();
  }

  // What follows the model without a patch of its own: dialogs open or closed, actions waiting for their inputs.
  afterChange() {
    for (const entry of this.nodes.values()) {
      if (entry.model.type === "Modal") syncModal(this, entry);
      if (entry.requires) forms.checkRequires(this, entry);
    }
    openOnErrors(this);
  }

  // --- forms (forms.js) ------------------------------------------------------------------------------------------

  collect(formId) {
    return forms.collect(this, formId);
  }

  showFieldErrors(fields, formId = null) {
    const placed = forms.showFieldErrors(this, fields, formId);
    openOnErrors(this);
    // A field that was folded away when its error was placed could not take focus then.
    const first = this.root.querySelector('.has-client-error [aria-invalid="true"]');
    if (first && !first.contains(document.activeElement)) first.focus();
    return placed;
  }

  clearFieldErrors() {
    forms.clearFieldErrors(this);
  }

  checkRequires(entry) {
    forms.checkRequires(this, entry);
  }

  // --- building nodes -------------------------------------------------------------------------------------------

  build(model, depth) {
    const entry = this.buildOwn(model, depth);
    this.nodes.set(model.id, entry);
    for (const child of model.children || []) entry.host.append(this.build(child, depth + 1));
    if (entry.host.classList.contains("scroller")) {
      requestAnimationFrame(() => {
        entry.host.scrollTop = entry.host.scrollHeight;
      });
    }
    return entry.root;
  }

  // The element's own node (its children are appended by the caller), with the attributes every type shares.
  buildOwn(model, depth) {
    const builder = BUILDERS[model.type] || buildGeneric;
    const entry = { model, depth, control: null, messages: null };
    Object.assign(entry, builder(model, { depth, entry, view: this }));
    const root = entry.root;
    if (!entry.host) {
      // Children of a leaf type go after its own content; void and interactive elements cannot hold them.
      if (VOID_TAGS.has(root.tagName)) entry.host = document.createElement("div");
      else {
        entry.host = node("div", "children");
        root.append(entry.host);
      }
    }
    root.dataset.id = model.id;
    root.dataset.ref = model.ref;
    root.dataset.type = model.type;
    root.dataset.kind = String(model.ref).split(/[-~]/)[0];
    if (model.platform) root.dataset.platform = model.platform;
    if (model.visible === false && model.type !== "Modal") root.hidden = true;
    if (model.highlighted) root.classList.add("is-highlighted");
    const props = model.props || {};
    if (typeof props.tone === "string") root.dataset.tone = props.tone;
    if (typeof props.align === "string") root.dataset.align = props.align;
    if (props.focus === true) root.dataset.focus = "true";
    if (typeof props.width === "string" && WIDTH.test(props.width)) root.style.setProperty("--width", props.width);
    if (model.enabled === false) {
      root.classList.add("is-disabled");
      if (entry.control) entry.control.disabled = true;
      else if (entry.button) entry.button.disabled = true;
      else root.setAttribute("aria-disabled", "true");
    }
    if (entry.control && model.name) entry.control.dataset.name = model.name;
    this.addMessages(entry);
    if (model.action) this.wireAction(entry);
    if (entry.control && typeof props.submit === "string") this.wireSubmit(entry, props.submit);
    if (entry.control && typeof props.draft === "string" && this.onDraft) this.onDraft(entry, this.rendering);
    const requires = forms.requiresOf(model);
    if (requires) entry.requires = requires;
    return entry;
  }

  // The element's own error and warning, tied to its control for assistive technology.
  addMessages(entry) {
    const { model } = entry;
    if (VOID_TAGS.has(entry.root.tagName) && !entry.messages) return;
    const box = entry.messages || entry.root;
    const described = entry.hint ? [entry.hint] : []; // a field's hint line stays described
    for (const [kind, message] of [
      ["error", model.error],
      ["warning", model.warning],
    ]) {
      if (!message) continue;
      const m = node("p", `msg msg-${kind}`, message);
      m.id = uid(kind);
      if (kind === "error") m.setAttribute("role", "alert");
      box.append(m);
      described.push(m.id);
    }
    const target = entry.control || entry.button;
    if (target && described.length > (entry.hint ? 1 : 0)) {
      target.setAttribute("aria-describedby", described.join(" "));
      if (model.error) target.setAttribute("aria-invalid", "true");
    }
    if (model.highlighted && target) target.classList.add("is-highlighted");
  }

  // Activating the element (click, Enter or Space; a change for inputs) asks the screen to run its action, as the
  // element's current model says.
  wireAction(entry) {
    const fire = (event) => {
      if (event) event.preventDefault();
      const current = this.nodes.get(entry.model.id);
      if (!current || current.model.enabled === false) return;
      this.lastActivated = current.model.id; // where focus returns when the dialog this opens closes
      this.onAction(current.model, this);
    };
    if (entry.button) entry.button.addEventListener("click", fire);
    else if (entry.control) entry.control.addEventListener("change", fire);
    else {
      entry.root.tabIndex = 0;
      entry.root.setAttribute("role", "button");
      entry.root.addEventListener("click", fire);
      entry.root.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") fire(event);
      });
    }
  }

  // Enter in an input whose `props.submit` names a control activates that control (a search box and its Apply).
  wireSubmit(entry, id) {
    entry.control.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      const target = this.nodes.get(id);
      if (!target || !target.model.action || target.model.enabled === false) return;
      event.preventDefault();
      this.lastActivated = target.model.id;
      this.onAction(target.model, this);
    });
  }

  refocus(id) {
    const entry = this.nodes.get(id);
    if (!entry) return;
    const target = entry.control || entry.root.querySelector("button, a, input, select, textarea") || entry.root;
    if (target && !target.disabled && !target.hidden) target.focus({ preventScroll: true });
  }

  // Drops the entries of an element and its descendants, and their image URLs.
  forget(id) {
    const entry = this.nodes.get(id);
    if (!entry) return;
    for (const n of entry.root.querySelectorAll("[data-id]")) {
      const child = this.nodes.get(n.dataset.id);
      if (child && child.blobUrl) {
        URL.revokeObjectURL(child.blobUrl);
        this.blobUrls.delete(child.blobUrl);
      }
      this.nodes.delete(n.dataset.id);
    }
    if (entry.blobUrl) {
      URL.revokeObjectURL(entry.blobUrl);
      this.blobUrls.delete(entry.blobUrl);
    }
    this.nodes.delete(id);
  }
}
