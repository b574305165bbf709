// The generic renderer: turns the element tree of a page into DOM and keeps it in step with update sets.
// It knows the element types and attributes of docs/protocol.md and nothing about particular screens.
// Server data only ever reaches the DOM through textContent, attribute values and form control values.

import { fetchBlob } from "./api.js";
import { applyOne, find, PatchError } from "./patch.js";

let uidCounter = 0;
const uid = (prefix) => `${prefix}-${++uidCounter}`;

const CONTROL_TYPES = new Set(["Edit", "Password", "Date", "Time", "Combo", "Timezone", "Checkbox", "Upload", "Hidden"]);
const VOID_TAGS = new Set(["INPUT", "HR", "BUTTON", "A", "SELECT", "TEXTAREA", "IMG"]);
const WIDTH = /^(100|[1-9]?[0-9])%$/;

const text = (value) => (value === null || value === undefined ? "" : String(value));

function node(tag, className, content) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (content !== undefined && content !== null && content !== "") n.textContent = text(content);
  return n;
}

// A same-origin path or an http(s) URL; anything else (javascript:, data:, //host) is refused.
export function safeHref(href) {
  if (typeof href !== "string") return null;
  if (href.startsWith("/") && !href.startsWith("//")) return href;
  try {
    const url = new URL(href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

function formatSize(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function formatTime(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return text(value);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

// Renders one page's elements into `root` and applies patches to both the model and the DOM.
export class ScreenView {
  constructor(root, { onAction, onNotice }) {
    this.root = root;
    this.onAction = onAction;
    this.onNotice = onNotice || (() => {});
    this.elements = [];
    this.nodes = new Map(); // element id -> {model, root, host, control, messages, depth}
    this.blobUrls = new Set();
  }

  destroy() {
    for (const url of this.blobUrls) URL.revokeObjectURL(url);
    this.blobUrls.clear();
    this.nodes.clear();
    this.root.replaceChildren();
  }

  render(elements) {
    for (const url of this.blobUrls) URL.revokeObjectURL(url);
    this.blobUrls.clear();
    this.nodes.clear();
    this.elements = structuredClone(elements);
    this.root.replaceChildren(...this.elements.map((e) => this.build(e, 0)));
    this.afterChange();
  }

  model(id) {
    const hit = find(this.elements, id);
    return hit ? hit[0][hit[1]] : null;
  }

  // Applies the patches in order (model and DOM). Throws PatchError when a patch does not fit the page.
  applyPatches(patches) {
    // Older items prepended (load more) must not move what the user is reading: anchor on it.
    const anchors = patches.some((p) => p.op === "prepend") ? this.captureAnchors() : [];
    for (const patch of patches) {
      const stick = patch.op === "append" || patch.op === "add" ? this.stickyBottom(patch.parent) : null;
      applyOne(this.elements, patch);
      this.applyDom(patch);
      if (stick) stick();
    }
    for (const restore of anchors) restore();
    this.afterChange();
  }

  // For each scrolled container: the first item in view and its offset, and a function putting it back there.
  captureAnchors() {
    const restores = [];
    for (const scroller of this.root.querySelectorAll(".scroller")) {
      const top = scroller.getBoundingClientRect().top;
      const items = [...scroller.querySelectorAll(":scope > [data-id]")].filter((e) => !e.hidden);
      const anchor = items.find((e) => e.getBoundingClientRect().bottom > top + 1);
      const fromBottom = scroller.scrollHeight - scroller.scrollTop;
      if (!anchor) continue;
      const offset = anchor.getBoundingClientRect().top - top;
      restores.push(() => {
        if (anchor.isConnected && scroller.contains(anchor)) {
          scroller.scrollTop += anchor.getBoundingClientRect().top - scroller.getBoundingClientRect().top - offset;
        } else {
          scroller.scrollTop = scroller.scrollHeight - fromBottom;
        }
      });
    }
    return restores;
  }

  // --- DOM side of each patch ---------------------------------------------------------------------------------

  hostOf(parent) {
    if (parent === null || parent === undefined) return { host: this.root, depth: 0 };
    const entry = this.nodes.get(parent);
    if (!entry) throw new PatchError(`no element ${parent}`);
    return { host: entry.host, depth: entry.depth + 1 };
  }

  applyDom(patch) {
    switch (patch.op) {
      case "add": {
        const { host, depth } = this.hostOf(patch.parent);
        const built = this.build(this.model(patch.element.id), depth);
        if (patch.after === null || patch.after === undefined) host.prepend(built);
        else this.nodes.get(patch.after).root.after(built);
        break;
      }
      case "append":
      case "prepend": {
        const { host, depth } = this.hostOf(patch.parent);
        const built = patch.elements.map((e) => this.build(this.model(e.id), depth));
        if (patch.op === "append") host.append(...built);
        else host.prepend(...built);
        break;
      }
      case "reset":
        this.render(this.elements);
        break;
      case "replace": {
        const old = this.nodes.get(patch.id);
        const focused = old.root.contains(document.activeElement);
        this.forget(patch.id);
        const built = this.build(this.model(patch.element.id), old.depth);
        old.root.replaceWith(built);
        if (focused) this.refocus(patch.element.id);
        break;
      }
      case "remove": {
        const old = this.nodes.get(patch.id);
        const focused = old.root.contains(document.activeElement);
        this.forget(patch.id);
        old.root.remove();
        if (focused) this.root.dispatchEvent(new CustomEvent("focuslost", { bubbles: true }));
        break;
      }
      case "update":
        this.refresh(patch.id, patch.set);
        break;
      default:
        throw new PatchError(`unknown patch op ${patch.op}`);
    }
  }

  // Rebuilds one element's own node after an update, keeping its children's DOM (and what the user typed in
  // it when the update does not set a value).
  refresh(id, changes) {
    const old = this.nodes.get(id);
    if (!old) throw new PatchError(`no element ${id}`);
    const model = this.model(id);
    const focused = old.root.contains(document.activeElement) && !old.host.contains(document.activeElement);
    const typed = old.control && !("value" in changes) ? this.readControl(old) : undefined;
    const keptFile = old.file;
    const fresh = this.buildOwn(model, old.depth);
    for (const child of model.children || []) {
      const childEntry = this.nodes.get(child.id);
      if (childEntry) fresh.host.append(childEntry.root);
    }
    old.root.replaceWith(fresh.root);
    this.nodes.set(id, fresh);
    const entry = fresh;
    if (typed !== undefined && entry.control) this.writeControl(entry, typed);
    if (keptFile && entry.control && entry.control.type === "file" && !("value" in changes)) {
      entry.file = keptFile;
      this.showDraft(entry);
    }
    if (focused) this.refocus(id);
  }

  refocus(id) {
    const entry = this.nodes.get(id);
    if (!entry) return;
    const target = entry.control || entry.root.querySelector("button, a, input, select, textarea") || entry.root;
    if (target && !target.disabled && !target.hidden) target.focus({ preventScroll: true });
  }

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

  // On append into a scrolled container the user had at its end, keep it at the end (new messages).
  stickyBottom(parent) {
    const scroller = this.scrollerOf(parent);
    if (!scroller) return null;
    const atEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
    return atEnd
      ? () => {
          scroller.scrollTop = scroller.scrollHeight;
        }
      : null;
  }

  scrollerOf(parent) {
    if (parent === null || parent === undefined) return null;
    const entry = this.nodes.get(parent);
    if (!entry) return null;
    let n = entry.host;
    while (n && n !== this.root.parentElement) {
      if (n.classList && n.classList.contains("scroller")) return n;
      n = n.parentElement;
    }
    return null;
  }

  afterChange() {
    for (const entry of this.nodes.values()) {
      if (entry.model.type === "Modal") this.syncModal(entry);
      if (entry.requires) this.checkRequires(entry);
    }
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

  buildOwn(model, depth) {
    const builder = BUILDERS[model.type] || buildGeneric;
    const entry = { model, depth, control: null, messages: null };
    Object.assign(entry, builder.call(this, model, depth, entry));
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
    // props.requires: every named input must be filled; props.requires_one_of: at least one of them.
    if (model.action && Array.isArray(props.requires)) entry.requires = { all: props.requires.map(String) };
    if (model.action && Array.isArray(props.requires_one_of)) {
      entry.requires = { any: props.requires_one_of.map(String) };
    }
    return entry;
  }

  addMessages(entry) {
    const { model } = entry;
    if (VOID_TAGS.has(entry.root.tagName) && !entry.messages) return;
    const box = entry.messages || entry.root;
    const described = [];
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
    if (target && described.length) {
      target.setAttribute("aria-describedby", described.join(" "));
      if (model.error) target.setAttribute("aria-invalid", "true");
    }
    if (model.highlighted && target) target.classList.add("is-highlighted");
  }

  wireAction(entry) {
    const fire = (event) => {
      if (event) event.preventDefault();
      const current = this.nodes.get(entry.model.id);
      if (!current || current.model.enabled === false) return;
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

  syncModal(entry) {
    const dialog = entry.root;
    const show = entry.model.visible !== false;
    if (show && !dialog.open && dialog.isConnected) {
      this.lastFocus = document.activeElement;
      dialog.showModal();
    } else if (!show && dialog.open) {
      dialog.close();
    }
  }

  // A control with props.requires stays disabled while one of the named inputs of its form is blank.
  checkRequires(entry) {
    const target = entry.button || entry.control;
    if (!target || entry.model.enabled === false) return;
    const scope = this.formScope(entry.model.action.form);
    const isBlank = (name) => {
      const input = scope.querySelector(`[data-name="${CSS.escape(name)}"]`);
      const value = input ? this.readControl(this.nodes.get(input.closest("[data-id]").dataset.id)) : "";
      if (value instanceof Blob) return false;
      return value === undefined || value === null || String(value).trim() === "";
    };
    const { all, any } = entry.requires;
    const blocked = all ? all.some(isBlank) : !any.some((name) => !isBlank(name));
    target.disabled = blocked;
    if (!entry.requiresWired) {
      entry.requiresWired = true;
      const recheck = () => {
        const current = this.nodes.get(entry.model.id);
        if (current && current.requires) this.checkRequires(current);
      };
      scope.addEventListener("input", recheck);
      scope.addEventListener("change", recheck);
    }
  }

  // --- forms ------------------------------------------------------------------------------------------------------

  formScope(formId) {
    if (formId) {
      const entry = this.nodes.get(formId);
      if (entry) return entry.root;
    }
    return this.root;
  }

  readControl(entry) {
    const c = entry && entry.control;
    if (!c) return undefined;
    if (c.type === "checkbox") return c.checked ? "true" : "false";
    if (c.type === "file") return entry.file || null;
    return c.value;
  }

  writeControl(entry, value) {
    const c = entry.control;
    if (c.type === "checkbox") c.checked = value === "true";
    else if (c.type !== "file") c.value = value;
  }

  // The [name, value] pairs of the enabled named inputs inside the element `formId` (the whole page without it).
  collect(formId) {
    const scope = this.formScope(formId);
    const fields = [];
    for (const control of scope.querySelectorAll("[data-name]")) {
      if (control.disabled) continue;
      const entry = this.nodes.get(control.closest("[data-id]").dataset.id);
      const value = this.readControl(entry);
      if (value === null || value === undefined) continue;
      fields.push([control.dataset.name, value]);
    }
    return fields;
  }

  // What the user typed that the page does not hold yet: {name: [modelValue, typedValue]} (a reload keeps it).
  typedValues() {
    const typed = {};
    for (const entry of this.nodes.values()) {
      if (!entry.control || !entry.model.name || entry.control.type === "hidden") continue;
      const value = this.readControl(entry);
      const shown = entry.model.value === null || entry.model.value === undefined ? "" : String(entry.model.value);
      if (typeof value === "string" && value !== shown && entry.control.type !== "checkbox") {
        typed[entry.model.name] = [shown, value];
      } else if (entry.file) typed[entry.model.name] = [null, entry.file];
    }
    return typed;
  }

  restoreTyped(typed) {
    for (const entry of this.nodes.values()) {
      if (!entry.control || !entry.model.name || !(entry.model.name in typed)) continue;
      const [shown, value] = typed[entry.model.name];
      const now = entry.model.value === null || entry.model.value === undefined ? "" : String(entry.model.value);
      if (value instanceof Blob && entry.draft) {
        entry.file = value;
        this.showDraft(entry);
      } else if (shown === now) this.writeControl(entry, value);
    }
    this.afterChange();
  }

  // Shows the per-field messages of an error body on the elements with those names; returns the names it placed.
  showFieldErrors(fields) {
    this.clearFieldErrors();
    const placed = [];
    let first = null;
    for (const [name, message] of Object.entries(fields || {})) {
      const control = this.root.querySelector(`[data-name="${CSS.escape(name)}"]`);
      if (!control) continue;
      const entry = this.nodes.get(control.closest("[data-id]").dataset.id);
      const m = node("p", "msg msg-error client-error", message);
      m.id = uid("error");
      (entry.messages || entry.root).append(m);
      control.setAttribute("aria-invalid", "true");
      control.setAttribute("aria-describedby", `${control.getAttribute("aria-describedby") || ""} ${m.id}`.trim());
      entry.root.classList.add("has-client-error");
      placed.push(name);
      if (!first) first = control;
    }
    if (first) first.focus();
    return placed;
  }

  clearFieldErrors() {
    for (const m of this.root.querySelectorAll(".client-error")) {
      const holder = m.closest("[data-id]");
      m.remove();
      if (!holder) continue;
      holder.classList.remove("has-client-error");
      const control = holder.querySelector("[data-name]");
      if (control) {
        const ids = (control.getAttribute("aria-describedby") || "").split(" ").filter((i) => i && i !== m.id);
        if (ids.length) control.setAttribute("aria-describedby", ids.join(" "));
        else control.removeAttribute("aria-describedby");
        const entry = this.nodes.get(holder.dataset.id);
        if (!entry || !entry.model.error) control.removeAttribute("aria-invalid");
      }
    }
  }

  // --- attachments and uploads -------------------------------------------------------------------------------------

  showDraft(entry) {
    const chip = entry.draft;
    chip.replaceChildren();
    chip.hidden = !entry.file;
    if (!entry.file) return;
    chip.append(node("span", "draft-name", entry.file.name), node("span", "draft-size", formatSize(entry.file.size)));
    const remove = node("button", "link draft-remove", "Remove");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove attachment ${entry.file.name}`);
    remove.addEventListener("click", () => {
      entry.file = null;
      entry.control.value = "";
      this.showDraft(entry);
      entry.control.dispatchEvent(new Event("input", { bubbles: true }));
      entry.control.focus();
    });
    chip.append(remove);
  }

  loadImage(entry, href, img) {
    fetchBlob(href)
      .then((blob) => {
        if (!this.nodes.has(entry.model.id)) return;
        const url = URL.createObjectURL(blob);
        entry.blobUrl = url;
        this.blobUrls.add(url);
        img.src = url;
        img.classList.add("is-loaded");
      })
      .catch(() => {
        img.replaceWith(node("span", "msg msg-error", "The image could not be loaded."));
      });
  }

  async download(href, name) {
    try {
      const blob = await fetchBlob(href);
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = name || "attachment";
      a.hidden = true;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch {
      this.onNotice({ level: "error", text: "The file could not be downloaded." });
    }
  }
}

function uploadProblem(file, props) {
  if (typeof props.max_bytes === "number" && file.size > props.max_bytes) {
    return `${file.name} is larger than ${formatSize(props.max_bytes)}.`;
  }
  if (typeof props.accept === "string" && props.accept) {
    const accepted = props.accept.split(",").map((t) => t.trim().toLowerCase());
    const type = (file.type || "").toLowerCase();
    const ext = `.${file.name.split(".").pop().toLowerCase()}`;
    if (!accepted.some((a) => a === type || a === ext || (a.endsWith("/*") && type.startsWith(a.slice(0, -1))))) {
      return `${file.name} is not a file type that can be sent.`;
    }
  }
  return null;
}

// --- builders per element type: each returns {root, host?, control?, button?, messages?} ------------------------

function labelled(model, control) {
  const root = node("div", "field");
  const label = node("label", "field-label", model.label || model.placeholder || model.ref);
  control.id = uid("f");
  label.htmlFor = control.id;
  if (!model.label) label.classList.add("visually-hidden");
  root.append(label, control);
  const messages = node("div", "field-messages");
  root.append(messages);
  return { root, messages };
}

function buildInput(model, type) {
  const props = model.props || {};
  let control;
  if (type === "text" && props.multiline) {
    control = document.createElement("textarea");
    control.rows = Number.isInteger(props.rows) ? props.rows : 2;
  } else {
    control = document.createElement("input");
    control.type = type;
  }
  if (model.value !== null && model.value !== undefined) control.value = text(model.value);
  if (model.placeholder) control.placeholder = model.placeholder;
  if (typeof props.maxlength === "number") control.maxLength = props.maxlength;
  if (typeof props.min === "string") control.min = props.min;
  if (typeof props.max === "string") control.max = props.max;
  if (type === "password") control.autocomplete = "current-password";
  if (props.required) control.required = true;
  return { ...labelled(model, control), control };
}

function buildSelect(model) {
  const control = document.createElement("select");
  const options = model.options || [];
  const current = model.value === null || model.value === undefined ? null : text(model.value);
  if (current === null || !options.some((o) => text(o.value) === current)) {
    const placeholder = node("option", null, model.placeholder || "Choose…");
    placeholder.value = "";
    control.append(placeholder);
  }
  for (const o of options) {
    const option = node("option", null, o.label);
    option.value = text(o.value);
    control.append(option);
  }
  control.value = current === null ? "" : current;
  return { ...labelled(model, control), control };
}

function headingTag(depth) {
  return `h${Math.min(6, depth + 2)}`;
}

function container(tag, className, model, depth) {
  const root = node(tag, className);
  let title = null;
  if (model.label) {
    title = node(headingTag(depth), `${className}-title`, model.label);
    title.id = uid("h");
    root.setAttribute("aria-labelledby", title.id);
    root.append(title);
  }
  const messages = node("div", "messages");
  const host = node("div", `${className}-body`);
  if (model.value !== null && model.value !== undefined) root.append(node("p", `${className}-value`, model.value));
  root.append(messages, host);
  return { root, host, messages };
}

function buildGeneric(model, depth) {
  const root = node("div", "element");
  if (model.label) root.append(node("span", "element-label", model.label));
  if (model.value !== null && model.value !== undefined) root.append(node("span", "element-value", model.value));
  const host = node("div", "element-body");
  root.append(host);
  return { root, host };
}

function buildButton(model, className) {
  const props = model.props || {};
  const href = safeHref(props.href);
  if (href && !model.action) {
    const a = node("a", className, model.label || model.value);
    a.href = href;
    if (!href.startsWith("/")) {
      a.rel = "noopener noreferrer";
      a.target = "_blank";
    }
    return { root: a };
  }
  const button = node("button", className);
  button.type = "button";
  button.append(node("span", "button-label", model.label || model.value || model.ref));
  if (typeof props.badge === "string" || typeof props.badge === "number") {
    button.append(node("span", "button-badge", props.badge));
  }
  if (typeof props.description === "string") button.setAttribute("aria-label", `${model.label} ${props.description}`);
  return { root: button, button };
}

const BUILDERS = {
  Heading(model, depth) {
    const tag = depth === 0 ? "h1" : headingTag(depth);
    const root = node(tag, "heading", model.value || model.label);
    root.tabIndex = -1;
    return { root };
  },
  Text(model) {
    const root = node("div", "text");
    if (model.label) root.append(node("span", "text-label", model.label));
    root.append(node("p", "text-value", model.value));
    return { root };
  },
  Regular(model) {
    const root = node("div", "regular");
    if (model.label) root.append(node("span", "regular-label", model.label));
    const value = node("span", "regular-value", model.value);
    const props = model.props || {};
    if (typeof props.datetime === "string") {
      const time = document.createElement("time");
      time.dateTime = props.datetime;
      time.className = "regular-value";
      time.textContent = text(model.value);
      root.append(time);
    } else root.append(value);
    return { root };
  },
  Caption(model) {
    return { root: node("p", "caption", model.value || model.label) };
  },
  Badge(model) {
    const root = node("span", "badge", model.value);
    if (model.value !== null && model.value !== undefined) root.dataset.value = text(model.value);
    if (model.label) {
      root.setAttribute("aria-label", `${text(model.value)} ${model.label}`);
      root.title = `${text(model.value)} ${model.label}`;
    }
    return { root };
  },
  Highlight(model) {
    const root = node("div", "highlight");
    if (model.label) root.append(node("span", "highlight-label", model.label));
    root.append(node("strong", "highlight-value", model.value));
    return { root };
  },
  Section(model, depth) {
    return container("section", "section", model, depth);
  },
  Card(model, depth) {
    return container("article", "card", model, depth);
  },
  Table(model, depth) {
    return container("div", "table", model, depth);
  },
  Row(model) {
    const root = node("div", "row");
    root.setAttribute("role", "group");
    if (model.label) root.setAttribute("aria-label", model.label);
    const messages = node("div", "messages");
    const host = node("div", "row-body");
    root.append(host, messages);
    return { root, host, messages };
  },
  Group(model) {
    const root = node("div", "group");
    const props = model.props || {};
    const meta = node("div", "group-meta");
    const sender = typeof props.sender === "string" ? props.sender : null;
    if (model.label && model.label !== sender) meta.append(node("span", "group-label", model.label));
    if (sender) meta.append(node("span", "group-sender", sender));
    if (typeof props.time === "string") {
      const time = document.createElement("time");
      time.className = "group-time";
      time.dateTime = props.time;
      time.textContent = typeof props.time_text === "string" ? props.time_text : formatTime(props.time);
      meta.append(time);
    }
    if (props.direction === "outgoing") root.dataset.align = "end";
    if (props.read === true && props.direction === "outgoing") meta.append(node("span", "group-read", "✓ Read"));
    if (meta.childNodes.length) root.append(meta);
    if (model.value !== null && model.value !== undefined) root.append(node("p", "group-text", model.value));
    const messages = node("div", "messages");
    const host = node("div", "group-body");
    root.append(host, messages);
    return { root, host, messages };
  },
  Scroller(model) {
    const root = node("div", "scroller-frame");
    const messages = node("div", "messages");
    const host = node("div", "scroller");
    host.tabIndex = 0;
    host.setAttribute("role", "log");
    host.setAttribute("aria-label", model.label || "Messages");
    root.append(messages, host);
    return { root, host, messages };
  },
  Spacer(model) {
    const props = model.props || {};
    if (props.role === "messages") {
      // A container of messages (the chat's desktop thread): a scrolling log.
      const root = node("div", "scroller-frame");
      const messages = node("div", "messages");
      const host = node("div", "scroller");
      host.tabIndex = 0;
      host.setAttribute("role", "log");
      host.setAttribute("aria-label", model.label || "Messages");
      root.append(messages, host);
      return { root, host, messages };
    }
    const root = node("div", "spacer");
    if (!model.children || !model.children.length) root.setAttribute("aria-hidden", "true");
    return { root };
  },
  Line() {
    return { root: document.createElement("hr") };
  },
  Link(model) {
    return buildButton(model, "link");
  },
  Button(model) {
    return buildButton(model, "btn");
  },
  Edit(model) {
    return buildInput(model, "text");
  },
  Password(model) {
    return buildInput(model, "password");
  },
  Date(model) {
    return buildInput(model, "date");
  },
  Time(model) {
    return buildInput(model, "time");
  },
  Combo(model) {
    return buildSelect(model);
  },
  Timezone(model) {
    return buildSelect(model);
  },
  Checkbox(model) {
    const root = node("div", "field field-check");
    const control = document.createElement("input");
    control.type = "checkbox";
    control.id = uid("f");
    control.checked = model.value === true || model.value === "true" || model.value === 1;
    const label = node("label", "check-label", model.label || model.ref);
    label.htmlFor = control.id;
    const messages = node("div", "field-messages");
    root.append(control, label, messages);
    return { root, control, messages };
  },
  Hidden(model) {
    const control = document.createElement("input");
    control.type = "hidden";
    control.value = text(model.value);
    return { root: control, control, host: document.createElement("div") };
  },
  Upload(model, depth, entry) {
    const props = model.props || {};
    const control = document.createElement("input");
    control.type = "file";
    if (typeof props.accept === "string") control.accept = props.accept;
    const { root, messages } = labelled({ ...model, label: model.label || "Attach a file" }, control);
    root.classList.add("field-upload");
    control.classList.add("visually-hidden-file");
    const label = root.querySelector("label");
    label.classList.remove("visually-hidden");
    label.classList.add("upload-button");
    const draft = node("div", "draft");
    draft.hidden = true;
    draft.setAttribute("aria-live", "polite");
    root.insertBefore(draft, messages);
    entry.draft = draft;
    entry.file = null;
    // One attachment at most: a second choice replaces the draft.
    control.addEventListener("change", () => {
      const current = this.nodes.get(model.id) || entry;
      const file = control.files && control.files.length ? control.files[0] : null;
      const problem = file ? uploadProblem(file, current.model.props || {}) : null;
      for (const old of root.querySelectorAll(".upload-error")) old.remove();
      if (problem) {
        // Blocked before sending (spec 4.4, chat validation 3): the previous draft, if any, stays.
        control.value = "";
        const m = node("p", "msg msg-error upload-error", problem);
        m.setAttribute("role", "alert");
        current.messages.append(m);
        return;
      }
      // At most one attachment: a second file replaces the draft (spec 4.4, chat validation 2).
      current.file = file;
      this.showDraft(current);
    });
    return { root, control, messages, draft };
  },
  Attachment(model, depth, entry) {
    const props = model.props || {};
    const root = node("div", "attachment");
    const href = safeHref(props.href);
    const name = model.label || model.value || "attachment";
    const mime = typeof props.mime === "string" ? props.mime : "";
    if (href && mime.startsWith("image/") && href.startsWith("/")) {
      const figure = node("figure", "attachment-image");
      const img = document.createElement("img");
      img.alt = name;
      img.decoding = "async";
      figure.append(img, node("figcaption", "attachment-name", name));
      root.append(figure);
      queueMicrotask(() => this.loadImage(entry, href, img));
    }
    if (href) {
      const button = node("button", "link attachment-download");
      button.type = "button";
      button.append(node("span", "attachment-icon", "⬇"), node("span", null, `Download ${name}`));
      const size = formatSize(props.size);
      if (size) button.append(node("span", "attachment-size", size));
      button.addEventListener("click", () => {
        if (href.startsWith("/")) this.download(href, name);
        else window.open(href, "_blank", "noopener");
      });
      root.append(button);
    } else {
      root.append(node("span", "attachment-name", name));
    }
    return { root };
  },
  Notice(model, depth) {
    const tone = (model.props && model.props.tone) || "info";
    const root = node("div", "notice");
    root.setAttribute("role", tone === "error" ? "alert" : "status");
    if (model.label) root.append(node("strong", "notice-title", model.label));
    if (model.value !== null && model.value !== undefined) root.append(node("p", "notice-text", model.value));
    const messages = node("div", "messages");
    const host = node("div", "notice-body");
    root.append(messages, host);
    return { root, host, messages, depth };
  },
  Modal(model, depth, entry) {
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
    // Escape closes the dialog on this client only; the server shows it again when it says so.
    root.addEventListener("cancel", (event) => {
      event.preventDefault();
      const current = this.nodes.get(model.id) || entry;
      current.model.visible = false;
      root.close();
    });
    root.addEventListener("close", () => {
      if (this.lastFocus && this.lastFocus.isConnected) this.lastFocus.focus();
    });
    return { root, host, messages };
  },
};

export { CONTROL_TYPES };
