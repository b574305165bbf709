// One active screen (the main view, or the chat panel): its page, its requests and its poll timer.
// Requests that carry the state token are queued so that every update set applies to the page it was made for.

import { ApiError, isBusy, NetworkError, request } from "./api.js";
import { askToConfirm } from "./dialogs.js";
import { safeHref } from "./dom.js";
import { newRequestId } from "./outbox.js";
import { PatchError } from "./patch.js";
import { ScreenView } from "./render.js";
import { createPasskey, passkeysWork } from "./second-factor.js";
import { t } from "./texts.js";

// A user's action answered "busy" is sent again this many times (after each Retry-After) before an error shows:
// the user's click or typed value is not lost to a burst (docs/protocol.md#busy).
const ACTION_BUSY_RETRIES = 2;

const path = (endpoint) => String(endpoint).split("?")[0];

const RELOADED = "The screen has been loaded again and shows the current state.";

// A new screen drawn under a pointer that has not moved (the mouse still where "Week" was clicked) would show
// whatever control now lies there as hovered, as if it were chosen or focused. Hover styles wait until the
// pointer moves, or anything is pressed (app.css: [data-pointer-still]).
function pointerStill(frame) {
  frame.dataset.pointerStill = "";
  const moved = () => {
    delete frame.dataset.pointerStill;
    for (const type of ["pointermove", "pointerdown", "keydown"]) document.removeEventListener(type, moved, true);
  };
  for (const type of ["pointermove", "pointerdown", "keydown"]) document.addEventListener(type, moved, true);
}

export class Screen {
  constructor(frame, shell, { slot }) {
    this.shell = shell;
    this.slot = slot;
    this.frame = frame;
    this.banner = frame.querySelector(".screen-banner");
    this.banner.tabIndex = -1; // focus moves to it when a reload replaces the control that had focus
    this.body = frame.querySelector(".screen-body");
    this.view = new ScreenView(this.body, {
      onAction: (model) => this.act(model),
      onNotice: (notice) => shell.notify(notice),
      onDraft: (entry, fresh) => this.wireDraft(entry, fresh),
    });
    this.drafts = new Map(); // draft endpoint -> {id, timer}: saves waiting for a pause in typing
    this.page = null;
    this.state = null;
    this.timer = null;
    this.busyAnswers = 0; // polls answered "busy" (503 SERVICE_BUSY with Retry-After) in a row
    this.generation = 0;
    this.queue = Promise.resolve();
    this.closed = false;
  }

  get poll() {
    return this.page ? this.page.poll : null;
  }

  // Does a real-time endpoint belong to this screen?
  owns(endpoint) {
    return Boolean(this.page) && (path(this.page.poll) === path(endpoint) || path(this.page.endpoint) === path(endpoint));
  }

  close() {
    this.flushDrafts();
    this.closed = true;
    this.generation += 1;
    this.cancelTimer();
    this.view.destroy();
  }

  // PUT: loads the screen at `endpoint`.
  async open(endpoint, { focus = true } = {}) {
    const generation = ++this.generation;
    this.frame.setAttribute("aria-busy", "true");
    try {
      const page = await request("PUT", endpoint);
      if (generation !== this.generation || this.closed) return null;
      this.showPage(page, { focus });
      return page;
    } catch (error) {
      if (generation === this.generation) this.handleError(error);
      return null;
    } finally {
      this.frame.removeAttribute("aria-busy");
    }
  }

  showPage(page, { focus = true } = {}) {
    this.generation += 1;
    const sameScreen = this.page && this.page.endpoint === page.endpoint;
    // An error stays with the screen it happened on (a reload keeps it; another screen does not show it).
    if (!sameScreen) this.clearBanner();
    this.page = page;
    this.state = page.state;
    this.frame.dataset.screen = page.screen;
    if (sameScreen) this.view.rerender(page.elements);
    else {
      this.view.render(page.elements);
      pointerStill(this.frame);
    }
    this.nameThePage(page);
    this.shell.screenShown(this, page);
    this.schedule();
    // The page names the step the user is at (`props.focus`, e.g. booking's "Your request" once a time is
    // picked): focus and view go there instead of the screen's heading.
    const step = focus ? this.body.querySelector('[data-focus="true"]:not([hidden])') : null;
    if (step) {
      const target = step.querySelector("h1, h2, h3, h4, h5, h6") || step;
      target.tabIndex = -1;
      target.focus({ preventScroll: true });
      step.scrollIntoView({ block: "start" });
    } else if (focus) {
      const heading = this.body.querySelector("h1, h2") || this.frame.parentElement.querySelector("[data-focus-fallback]");
      if (heading) {
        heading.tabIndex = -1;
        heading.focus({ preventScroll: true });
      }
    }
  }

  // A main screen whose page has no level-one heading of its own (the phone's chat: its subject line is the
  // spec's tag) gets its title as one, visually hidden, so the page still says what it is.
  nameThePage(page) {
    const own = this.body.querySelector("h1");
    if (this.slot !== "main" || own) {
      if (this.pageName) this.pageName.remove();
      this.pageName = null;
      return;
    }
    if (!this.pageName) {
      this.pageName = document.createElement("h1");
      this.pageName.className = "visually-hidden";
      this.pageName.dataset.pageName = "true";
      this.body.before(this.pageName);
    }
    this.pageName.textContent = page.title || "";
  }

  // --- the poll cycle (spec 6.1: always running, at the page's timeout) -------------------------------------------

  schedule(retryAfter = null) {
    this.cancelTimer();
    if (!this.page || this.closed) return;
    // A busy service's answer says when to ask again (whole seconds); otherwise the page's timeout.
    const seconds = retryAfter || Math.max(1, Number(this.page.timeout) || 30);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.patch(this.page.poll, { reschedule: true });
    }, seconds * 1000);
  }

  cancelTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  // PATCH `endpoint` with the screen's state and apply the answer. With `reschedule`, the poll timer starts
  // again afterwards (poll cycle and Timeout); without it the schedule is left as it is (a real-time endpoint).
  patch(endpoint, { reschedule = false } = {}) {
    return this.enqueue(async (generation) => {
      let retryAfter = null;
      try {
        const update = await request("PATCH", endpoint, { state: this.state });
        if (generation !== this.generation) return;
        this.busyAnswers = 0;
        this.applyUpdate(update);
      } catch (error) {
        if (generation !== this.generation) return;
        if (error instanceof NetworkError) this.shell.offline(true);
        else if (reschedule && isBusy(error)) {
          // The service is busy and says when to come back: the poll is sent again then. One busy answer shows
          // nothing; a second in a row is shown like any other error.
          retryAfter = error.retryAfter;
          this.busyAnswers += 1;
          if (this.busyAnswers > 1) this.handleError(error, { quiet: true });
        } else this.handleError(error, { quiet: true });
      } finally {
        if (reschedule && generation === this.generation && this.timer === null) this.schedule(retryAfter);
      }
    });
  }

  enqueue(task) {
    const generation = this.generation;
    const run = this.queue.then(() => (this.closed ? null : task(generation)));
    this.queue = run.catch(() => {});
    return run;
  }

  applyUpdate(update) {
    this.shell.offline(false);
    if (!update || update.kind !== "update") return;
    if (this.page && update.screen && update.screen !== this.page.screen && update.patches.length) {
      // An answer for another screen (the user moved on): load the current one again.
      this.open(this.page.endpoint, { focus: false });
      return;
    }
    try {
      if (update.patches && update.patches.length) this.view.applyPatches(update.patches);
    } catch (error) {
      // The update does not fit the page shown (or is malformed): the server's page is the truth.
      if (!(error instanceof PatchError)) console.warn("update set not applied", error);
      this.open(this.page.endpoint, { focus: false });
      return;
    }
    if (update.state) this.state = update.state;
    if (this.page && typeof update.timeout === "number" && update.timeout !== this.page.timeout) {
      this.page.timeout = update.timeout;
      if (this.timer !== null) this.schedule();
    }
    if (update.notice) this.shell.notify(update.notice);
    // A SMART launch's answer: the browser goes back to the app (only to an http(s) address).
    const leave = safeHref(update.leave);
    if (leave && !leave.startsWith("/")) {
      window.location.assign(leave);
      return;
    }
    if (update.navigate) this.shell.navigate(update.navigate, { from: this });
    else if (update.reload) this.open(this.page.endpoint, { focus: false });
  }

  // --- actions ---------------------------------------------------------------------------------------------------

  async act(model) {
    const action = model.action;
    if (action.confirm && !(await askToConfirm(action.confirm, { confirm: model.label || t("Confirm"), back: t("Back") })))
      return;
    const fields = this.view.collect(action.form);
    this.clearBanner();
    this.view.clearFieldErrors();
    if (action.method === "PUT") {
      const props = model.props || {};
      this.shell.open(action.endpoint, { from: this, panel: typeof props.panel === "string" ? props.panel : null });
      return;
    }
    // A send that may wait for the connection carries an id of its own, the same on every try (outbox.js).
    const props = model.props || {};
    if (props.webauthn === "create" && !(await this.withPasskey(fields, action.form))) return;
    const held = typeof props.idempotency === "string" ? `${this.slot}:${model.id}` : null;
    if (held) {
      const waiting = this.shell.outbox.get(held);
      fields.push([props.idempotency, waiting ? waiting.id : newRequestId()]);
    }
    const control = this.view.nodes.get(model.id);
    const button = control && (control.button || null);
    if (button) {
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
    }
    await this.enqueue(async (generation) => {
      try {
        const options = { fields, state: this.state, retryBusy: ACTION_BUSY_RETRIES };
        const body = await request(action.method, action.endpoint, options);
        if (generation !== this.generation) return;
        if (body && body.kind === "page") this.showPage(body);
        else this.applyUpdate(body);
      } catch (error) {
        if (held && error instanceof NetworkError) {
          const id = fields[fields.length - 1][1];
          this.shell.outbox.hold(held, { screen: this, method: action.method, endpoint: action.endpoint, fields, id });
          this.shell.offline(true);
          this.showBanner(t("Not sent yet: no connection. It will be sent when the connection is back."), {
            tone: "info",
          });
          return;
        }
        // A reload the error asks for runs inside the queue: nothing queued after it uses the stale page.
        if (generation === this.generation) await this.handleError(error, { form: action.form });
      }
    });
    const after = this.view.nodes.get(model.id);
    if (after && after.button && after.button === button) {
      button.removeAttribute("aria-busy");
      button.disabled = after.model.enabled === false;
      if (after.requires) this.view.checkRequires(after);
    }
  }

  // "Add a passkey" (props.webauthn): the browser creates the passkey first, and the action sends its ticket and
  // credential (the toJSON() object, as JSON text in the form) with the other fields. False when there is none.
  async withPasskey(fields, form) {
    try {
      if (!passkeysWork()) throw new Error("no WebAuthn");
      const { ticket, credential } = await createPasskey();
      fields.push(["ticket", ticket], ["credential", JSON.stringify(credential)]);
      return true;
    } catch (error) {
      if (error instanceof ApiError) await this.handleError(error, { form });
      else this.showBanner(t("The passkey could not be created."), { tone: "error" });
      return false;
    }
  }

  // A send held while offline went through: the answer applies as the send's own would have.
  heldSent(body) {
    if (!this.closed) {
      this.clearBanner();
      if (body && body.kind === "page") this.showPage(body);
      else this.applyUpdate(body);
    }
    this.shell.notify({ level: "info", text: t("Sent now that the connection is back.") });
  }

  heldFailed(error) {
    if (!this.closed) this.handleError(error);
  }

  // --- drafts (props.draft: an input whose text is kept with the server, docs/protocol.md) -----------------------

  // A page just shown: an empty input gets the draft kept for it (typed on another device, or before a reload).
  // Typing saves it after a pause, through the request queue, so a save queued before a send reaches the server
  // before it; the text is read when the save runs (after a send's answer cleared the box, it saves nothing).
  wireDraft(entry, fresh) {
    const endpoint = entry.model.props.draft;
    const id = entry.model.id;
    const control = entry.control;
    if (fresh && !control.value) {
      request("GET", endpoint)
        .then((draft) => {
          const now = this.view.nodes.get(id);
          if (!draft || typeof draft.content !== "string" || !draft.content || !now || now.control.value) return;
          if (now.control.disabled) return;
          now.control.value = draft.content;
          now.control.dispatchEvent(new Event("input", { bubbles: true }));
        })
        .catch(() => {});
    }
    control.addEventListener("input", (event) => {
      if (!event.isTrusted) return; // the restored draft itself
      const pending = this.drafts.get(endpoint);
      if (pending) clearTimeout(pending.timer);
      const timer = setTimeout(() => this.saveDraft(endpoint), 800);
      this.drafts.set(endpoint, { id, timer });
    });
  }

  saveDraft(endpoint, { keepalive = false } = {}) {
    const pending = this.drafts.get(endpoint);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.drafts.delete(endpoint);
    const text = () => {
      const entry = this.view.nodes.get(pending.id);
      return entry && entry.control ? entry.control.value : null;
    };
    if (keepalive) {
      const value = text();
      if (value !== null) request("PUT", endpoint, { fields: [["content", value]], keepalive: true }).catch(() => {});
      return;
    }
    this.enqueue(async () => {
      const value = text();
      if (value === null) return;
      try {
        await request("PUT", endpoint, { fields: [["content", value]] });
      } catch {
        // Kept in the box; the next pause in typing tries again.
      }
    });
  }

  // The page is going away (reload, another screen, the tab closing): what waits is sent now.
  flushDrafts() {
    for (const endpoint of [...this.drafts.keys()]) this.saveDraft(endpoint, { keepalive: true });
  }

  // Shows an error; resolves once the reload it may ask for is done.
  // `form`: the element whose fields the failed action sent, where its field messages go first.
  async handleError(error, { quiet = false, form = null } = {}) {
    if (error instanceof NetworkError) {
      this.shell.offline(true);
      if (!quiet) this.showBanner(error.message);
      return;
    }
    if (!(error instanceof ApiError)) {
      console.error(error);
      if (!quiet) this.showBanner(t("Something went wrong. Please try again."));
      return;
    }
    if (error.sessionEnded) return; // the shell shows the login screen
    const body = error.body || {};
    if (quiet && error.status >= 500) return;
    const placed = this.view.showFieldErrors(body.fields || {}, form);
    const rest = Object.entries(body.fields || {})
      .filter(([name]) => !placed.includes(name))
      .map(([name, message]) => `${name}: ${message}`);
    const message = [body.message || error.message, ...rest].join(" ");
    // Errors placed on their fields are shown there once, focus on the first (forms.js): a banner above would
    // repeat "One or more fields…" and push the form (the chat's composer) down, out of sight. A refusal with a
    // reload, a message no field holds, or a code of its own (outside a dialog) still gets its banner.
    const allPlaced = placed.length > 0 && !rest.length && !body.reload;
    const saidAtFields =
      allPlaced && (body.code === "FIELDS_VALIDATION_ERROR" || placed.every((name) => this.inOpenDialog(name)));
    if (!saidAtFields) this.showBanner(message, { tone: "error" });
    if (body.reload && this.page) await this.reloadAfter(message);
  }

  // `reload: true` (APPOINTMENT_CHANGED): the page is stale. It is loaded again, and the banner keeps the reason
  // and says the screen now shows the current state; focus lost with the old page goes to that message.
  async reloadAfter(message) {
    const page = await this.open(this.page.endpoint, { focus: false });
    if (!page) return;
    this.showBanner(`${message} ${t(RELOADED)}`, { tone: "error" });
    if (!document.activeElement || document.activeElement === document.body) this.banner.focus();
  }

  inOpenDialog(name) {
    const control = this.body.querySelector(`[data-name="${CSS.escape(name)}"]`);
    return Boolean(control && control.closest("dialog[open]"));
  }

  showBanner(message, { tone = "error" } = {}) {
    this.banner.replaceChildren();
    const text = document.createElement("p");
    text.textContent = message;
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "link banner-dismiss";
    dismiss.textContent = t("Dismiss");
    dismiss.addEventListener("click", () => this.clearBanner());
    this.banner.append(text, dismiss);
    this.banner.dataset.tone = tone;
    this.banner.hidden = false;
  }

  clearBanner() {
    this.banner.hidden = true;
    this.banner.replaceChildren();
  }
}

