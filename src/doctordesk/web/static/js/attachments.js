// Files in a screen: the Upload element (one draft file, checked against props.max_bytes and props.accept before
// anything is sent) and the Attachment element (images shown from a blob: URL, other files offered as a download;
// both fetched with the Authorization header).

import { fetchBlob } from "./api.js";
import { formatSize, node, safeHref } from "./dom.js";
import { labelled } from "./elements.js";
import { t, tf } from "./texts.js";

function uploadProblem(file, props) {
  if (typeof props.max_bytes === "number" && file.size > props.max_bytes) {
    return tf("{name} is larger than {size}.", { name: file.name, size: formatSize(props.max_bytes) });
  }
  if (typeof props.accept === "string" && props.accept) {
    const accepted = props.accept.split(",").map((a) => a.trim().toLowerCase());
    const type = (file.type || "").toLowerCase();
    const ext = `.${file.name.split(".").pop().toLowerCase()}`;
    if (!accepted.some((a) => a === type || a === ext || (a.endsWith("/*") && type.startsWith(a.slice(0, -1))))) {
      return tf("{name} is not a file type that can be sent.", { name: file.name });
    }
  }
  return null;
}

// Shows the Upload's draft file (entry.file) with a control removing it; hides the chip when there is none.
export function showDraft(entry) {
  const chip = entry.draft;
  chip.replaceChildren();
  chip.hidden = !entry.file;
  if (!entry.file) return;
  chip.append(node("span", "draft-name", entry.file.name), node("span", "draft-size", formatSize(entry.file.size)));
  const remove = node("button", "link draft-remove", t("Remove"));
  remove.type = "button";
  remove.setAttribute("aria-label", `${t("Remove attachment")} ${entry.file.name}`);
  remove.addEventListener("click", () => {
    entry.file = null;
    entry.control.value = "";
    showDraft(entry);
    entry.control.dispatchEvent(new Event("input", { bubbles: true }));
    entry.control.focus();
  });
  chip.append(remove);
}

export function buildUpload(model, { entry, view }) {
  const props = model.props || {};
  const control = document.createElement("input");
  control.type = "file";
  if (typeof props.accept === "string") control.accept = props.accept;
  const { root, messages } = labelled({ ...model, label: model.label || t("Attach a file") }, control);
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
  control.addEventListener("change", () => {
    const current = view.nodes.get(model.id) || entry;
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
    showDraft(current);
  });
  return { root, control, messages, draft };
}

export function buildAttachment(model, { entry, view }) {
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
    queueMicrotask(() => loadImage(view, entry, href, img));
  }
  if (href) {
    const button = node("button", "link attachment-download");
    button.type = "button";
    button.append(node("span", "attachment-icon", "⬇"), node("span", null, `${t("Download")} ${name}`));
    const size = formatSize(props.size);
    if (size) button.append(node("span", "attachment-size", size));
    button.addEventListener("click", () => {
      if (href.startsWith("/")) download(view, href, name);
      else window.open(href, "_blank", "noopener");
    });
    root.append(button);
  } else {
    root.append(node("span", "attachment-name", name));
  }
  return { root };
}

// The blob: URL is the view's to revoke (when the element leaves the page or the page is rendered again).
function loadImage(view, entry, href, img) {
  fetchBlob(href)
    .then((blob) => {
      if (!view.nodes.has(entry.model.id)) return;
      const url = URL.createObjectURL(blob);
      entry.blobUrl = url;
      view.blobUrls.add(url);
      img.src = url;
      img.classList.add("is-loaded");
    })
    .catch(() => {
      img.replaceWith(node("span", "msg msg-error", t("The image could not be loaded.")));
    });
}

async function download(view, href, name) {
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
    view.onNotice({ level: "error", text: t("The file could not be downloaded.") });
  }
}
