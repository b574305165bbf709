// Builders for the element types of docs/protocol.md that need nothing but their model: text, containers, links
// and buttons, inputs. Each returns the parts of an entry: {root, host?, control?, button?, messages?}
// (`host` holds the children, `messages` the element's error and warning). Uploads, attachments and dialogs,
// which act on the view, are in attachments.js and dialogs.js.

import { dayText } from "./days.js";
import { formatTime, node, safeHref, text, uid } from "./dom.js";
import { makeFoldable } from "./fold.js";
import { number, t, tf } from "./texts.js";

function headingTag(depth) {
  return `h${Math.min(6, depth + 2)}`;
}

// A control with its label (visually hidden when the page gives none) and a box for its messages.
export function labelled(model, control) {
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
    control.type = type === "text" && props.type === "search" ? "search" : type;
  }
  if (model.value !== null && model.value !== undefined) control.value = text(model.value);
  if (model.placeholder) control.placeholder = model.placeholder;
  if (typeof props.maxlength === "number") control.maxLength = props.maxlength;
  if (typeof props.min === "string") control.min = props.min;
  if (typeof props.max === "string") control.max = props.max;
  if (type === "password") control.autocomplete = props.autocomplete === "new-password" ? "new-password" : "current-password";
  if (props.required) control.required = true;
  const parts = { ...labelled(model, control), control };
  if (typeof props.maxlength === "number" && props.multiline) countCharacters(control, parts.root, props.maxlength);
  return parts;
}

// A text box with a limit shows a counter once it holds 90 % of it, and a paste that does not fit says what was
// left out (the browser keeps only what fits): nothing is cut silently.
function countCharacters(control, root, max) {
  const counter = node("p", "char-count");
  counter.hidden = true;
  counter.setAttribute("aria-live", "polite");
  const cut = node("p", "msg msg-warning char-cut");
  cut.hidden = true;
  cut.setAttribute("role", "status");
  root.append(counter, cut);
  const update = () => {
    const n = control.value.length;
    counter.hidden = n < Math.floor(max * 0.9);
    counter.textContent = tf("{count} of {max} characters", { count: number(n), max: number(max) });
    counter.classList.toggle("is-full", n >= max);
    if (!n) cut.hidden = true;
  };
  control.addEventListener("input", update);
  control.addEventListener("paste", (event) => {
    const pasted = event.clipboardData ? event.clipboardData.getData("text") : "";
    const replaced = (control.selectionEnd || 0) - (control.selectionStart || 0);
    const room = Math.max(0, max - (control.value.length - replaced));
    if (pasted.length <= room) return;
    const left = pasted.slice(room);
    const start = left.length > 40 ? `${left.slice(0, 40)}…` : left;
    cut.textContent = tf(
      "Only {max} characters fit: the last {count} characters of the pasted text were left out, from “{start}”.",
      { max: number(max), count: number(left.length), start },
    );
    cut.hidden = false;
  });
  update();
}

// A day in the clinic's format (props.format, from the server): a text field with the pattern as placeholder and a
// hint line under it, not the browser's date input (which follows the browser's locale: mm/dd/yyyy in an English
// browser for a German clinic). forms.js reads it back as YYYY-MM-DD.
function buildDay(model) {
  const props = model.props || {};
  if (typeof props.format !== "string") return buildInput(model, "date");
  const parts = buildInput({ ...model, value: null }, "text");
  const { control } = parts;
  control.value = dayText(model.value, props.format);
  control.inputMode = "numeric";
  control.autocomplete = "off";
  control.spellcheck = false;
  control.classList.add("day-input");
  if (typeof props.hint === "string") {
    const hint = node("p", "field-hint", props.hint);
    hint.id = uid("hint");
    parts.messages.before(hint);
    control.setAttribute("aria-describedby", hint.id);
    parts.hint = hint.id;
  }
  return { ...parts, dayFormat: props.format };
}

// A time of day as a text field on the 24-hour clock: the browser's <input type="time"> follows the browser's
// own locale, not the page's, and shows "10:00 AM" in many an English (even a German) chromium.
function buildClock(model) {
  const parts = buildInput({ ...model, placeholder: model.placeholder || "HH:MM" }, "text");
  const { control } = parts;
  control.inputMode = "numeric";
  control.autocomplete = "off";
  control.spellcheck = false;
  control.maxLength = 8;
  control.classList.add("time-input");
  return { ...parts, clock: true };
}

function buildSelect(model) {
  const control = document.createElement("select");
  const options = model.options || [];
  const current = model.value === null || model.value === undefined ? null : text(model.value);
  if (current === null || !options.some((o) => text(o.value) === current)) {
    const placeholder = node("option", null, model.placeholder || t("Choose…"));
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

// A choice from a long list (props.searchable): a text box whose suggestions are the options, filtered as the
// user types. The service judges the value; the option without a value gives the box its prompt.
function buildSearchable(model) {
  const control = document.createElement("input");
  control.type = "text";
  control.autocomplete = "off";
  control.spellcheck = false;
  const list = document.createElement("datalist");
  list.id = uid("list");
  for (const o of model.options || []) {
    const value = text(o.value);
    if (!value) {
      control.placeholder = text(o.label);
      continue;
    }
    const option = document.createElement("option");
    option.value = value;
    if (text(o.label) !== value) option.label = text(o.label);
    list.append(option);
  }
  control.setAttribute("list", list.id);
  control.value = model.value === null || model.value === undefined ? "" : text(model.value);
  const parts = { ...labelled(model, control), control };
  parts.root.append(list);
  return parts;
}

function container(tag, className, model, depth) {
  const root = node(tag, className);
  if (model.label) {
    const title = node(headingTag(depth), `${className}-title`, model.label);
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

// A scrolling log of messages (the chat's thread).
function messageLog(model) {
  const root = node("div", "scroller-frame");
  const messages = node("div", "messages");
  const host = node("div", "scroller");
  host.tabIndex = 0;
  host.setAttribute("role", "log");
  host.setAttribute("aria-label", model.label || t("Messages"));
  root.append(messages, host);
  return { root, host, messages };
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
  if (!model.action && typeof props.copy === "string") return copyButton(model, className, props.copy);
  if (!model.action) {
    // Nothing to activate (e.g. the prescription note of a card): an inline note, its warning shown beside it,
    // not a control that does nothing. An update that gives it an action rebuilds it as a button.
    const root = node("div", "inline-info");
    root.append(node("span", "inline-info-label", model.label || model.value || model.ref));
    const messages = node("div", "field-messages");
    root.append(messages);
    return { root, messages };
  }
  const button = node("button", className);
  button.type = "button";
  button.append(node("span", "button-label", model.label || model.value || model.ref));
  if (typeof props.badge === "string" || typeof props.badge === "number") {
    button.append(node("span", "button-badge", props.badge));
  }
  if (typeof props.description === "string") button.setAttribute("aria-label", `${model.label} ${props.description}`);
  if (typeof props.chip === "string") {
    // A removable part of a filter: its words and a ×; its name says what activating it removes.
    button.classList.add("chip");
    const cross = node("span", "chip-remove", "×");
    cross.setAttribute("aria-hidden", "true");
    button.append(cross);
    button.setAttribute("aria-label", props.chip);
  }
  return { root: button, button };
}

// A button that puts `value` on the clipboard (no request): a secret address shown once, for instance. The
// clipboard API needs a secure context; elsewhere a selected, off-screen text area is copied instead.
function copyButton(model, className, value) {
  const label = model.label || t("Copy");
  const button = node("button", className);
  button.type = "button";
  const caption = node("span", "button-label", label);
  button.append(caption);
  const status = node("span", "visually-hidden");
  status.setAttribute("role", "status");
  button.append(status);
  button.addEventListener("click", async () => {
    let copied = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(value);
        copied = true;
      }
    } catch {
      copied = false;
    }
    if (!copied) {
      const area = document.createElement("textarea");
      area.value = value;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.left = "-9999px";
      document.body.append(area);
      area.select();
      try {
        copied = document.execCommand("copy");
      } catch {
        copied = false;
      }
      area.remove();
    }
    caption.textContent = copied ? t("Copied") : t("Select and copy the address");
    status.textContent = copied ? t("Copied to the clipboard") : t("Could not copy");
    button.dataset.copied = copied ? "true" : "false";
    setTimeout(() => {
      caption.textContent = label;
    }, 2000);
  });
  return { root: button, button };
}

// An element of a type this client does not know: its label and value, and room for its children.
export function buildGeneric(model) {
  const root = node("div", "element");
  if (model.label) root.append(node("span", "element-label", model.label));
  if (model.value !== null && model.value !== undefined) root.append(node("span", "element-value", model.value));
  const host = node("div", "element-body");
  root.append(host);
  return { root, host };
}

export const ELEMENT_BUILDERS = {
  Heading(model, { depth }) {
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
    const props = model.props || {};
    if (typeof props.datetime === "string") {
      const time = document.createElement("time");
      time.dateTime = props.datetime;
      time.className = "regular-value";
      time.textContent = text(model.value);
      root.append(time);
    } else root.append(node("span", "regular-value", model.value));
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
    // The label and the amount never run together ("Doctor fee €60.00"), in the layout and in the text.
    if (model.label) root.append(node("span", "highlight-label", model.label), document.createTextNode(" "));
    root.append(node("strong", "highlight-value", model.value));
    return { root };
  },
  Section(model, { depth, view }) {
    // A page's sections are its regions; a section inside another element (a card's "Total fee") is a group, so
    // the page's landmarks stay few and each has its own name (axe: landmark-unique).
    if (depth === 0) {
      const parts = container("section", "section", model, depth);
      return (model.props || {}).fold === true ? makeFoldable(parts, model, view) : parts;
    }
    const parts = container("div", "section", model, depth);
    parts.root.setAttribute("role", "group");
    return parts;
  },
  Card(model, { depth }) {
    return container("article", "card", model, depth);
  },
  Table(model, { depth }) {
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
    if (props.read === true && props.direction === "outgoing") meta.append(node("span", "group-read", t("✓ Read")));
    if (meta.childNodes.length) root.append(meta);
    if (model.value !== null && model.value !== undefined) root.append(node("p", "group-text", model.value));
    const messages = node("div", "messages");
    const host = node("div", "group-body");
    root.append(host, messages);
    return { root, host, messages };
  },
  Scroller(model) {
    return messageLog(model);
  },
  Spacer(model) {
    // A container of messages (the chat's desktop thread) is a scrolling log like the mobile Scroller.
    if ((model.props || {}).role === "messages") return messageLog(model);
    const root = node("div", "spacer");
    if (!model.children || !model.children.length) root.setAttribute("aria-hidden", "true");
    return { root };
  },
  Image(model) {
    // Only an image the service drew itself (a data: URL of an image type, e.g. an enrolment's QR code): an <img>
    // runs no script of an SVG, and nothing of it is parsed as HTML here.
    const root = node("div", "image");
    const src = typeof model.value === "string" ? model.value : "";
    if (/^data:image\/(svg\+xml|png);/.test(src)) {
      const img = document.createElement("img");
      img.src = src;
      img.alt = model.label || "";
      root.append(img);
    }
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
    return buildDay(model);
  },
  Time(model) {
    return buildClock(model);
  },
  Combo(model) {
    return buildSelect(model);
  },
  Timezone(model) {
    return (model.props || {}).searchable ? buildSearchable(model) : buildSelect(model);
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
  Notice(model) {
    const tone = (model.props && model.props.tone) || "info";
    const root = node("div", "notice");
    root.setAttribute("role", tone === "error" ? "alert" : "status");
    if (model.label) root.append(node("strong", "notice-title", model.label));
    if (model.value !== null && model.value !== undefined) root.append(node("p", "notice-text", model.value));
    const messages = node("div", "messages");
    const host = node("div", "notice-body");
    root.append(messages, host);
    return { root, host, messages };
  },
};
