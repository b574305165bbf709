// The shell: login and logout, the main screen and the chat panel, history, notices and the real-time link.
// Everything a screen shows comes from the server's page objects (render.js); nothing here knows a screen.

import * as api from "./api.js";
import { Outbox } from "./outbox.js";
import { linkToken, showSetPassword } from "./password-link.js";
import * as factors from "./second-factor.js";
import { Screen } from "./screen.js";
import { handleMessage, loadEndpoints, RealtimeLink } from "./sync.js";
import * as i18n from "./i18n.js";
import { t, throttled } from "./texts.js";

const HOME = "/profile/appointments";
const THREADS = "/profile/messages/threads";
const WIDE_QUERY = "(min-width: 1180px)";
// The chat open in this tab's panel, so a reload opens it again where it was (its draft comes from the server).
const PANEL_KEY = "doctordesk.panel";
const $ = (id) => document.getElementById(id);

const ROLE_NAMES = { doctor: "Doctor", support: "Support", admin: "Administrator", patient: "Patient" };
const roleName = (role) => (ROLE_NAMES[role] ? t(ROLE_NAMES[role]) : role);

// A code already taken (the one that just confirmed the app) says so and when the next one comes, in the words the
// service wrote in the reader's language; any other wrong code is just wrong.
const spentOrWrong = (body) => (body && body.reason === "code-used" && body.message) || t("Wrong code.");

class Shell {
  constructor() {
    this.main = null;
    this.panel = null;
    this.panelEndpoint = null;
    this.mainEndpoint = null;
    this.outbox = new Outbox();
    this.link = new RealtimeLink({
      onMessage: (data) => handleMessage(data, this.screens()),
      onStatus: (status) => this.connection(status),
      onReconnect: () => {
        for (const screen of this.screens()) if (screen.page) screen.open(screen.page.endpoint, { focus: false });
      },
    });
  }

  screens() {
    return [this.main, this.panel].filter(Boolean);
  }

  // --- start, login, logout ---------------------------------------------------------------------------------------

  start() {
    $("skip-link").addEventListener("click", (event) => {
      event.preventDefault();
      $("main").focus();
    });
    $("login-form").addEventListener("submit", (event) => this.submitLogin(event));
    $("login-passkey").addEventListener("click", () => this.passkeyLogin());
    $("logout").addEventListener("click", () => this.logout());
    $("back").addEventListener("click", () => this.back());
    for (const link of document.querySelectorAll("[data-nav]")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        this.navigate(link.dataset.nav);
      });
    }
    // The panel's close control activates the screen's own close element when it has one (closing a chat marks
    // its messages read), and simply closes the panel otherwise.
    $("panel-close").addEventListener("click", () => this.requestPanelClose());
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.panel && !document.querySelector("dialog[open]")) this.requestPanelClose();
    });
    window.addEventListener("popstate", () => {
      if (!api.currentSession()) return;
      const endpoint = this.endpointFromLocation();
      if (endpoint !== this.mainEndpoint) this.showMain(endpoint, { push: false });
    });
    // Unsent drafts waiting for a pause in typing are sent as the page goes (reload, tab closed).
    window.addEventListener("pagehide", () => {
      for (const screen of this.screens()) screen.flushDrafts();
    });
    window.matchMedia(api.MOBILE_QUERY).addEventListener("change", () => this.layoutChanged());
    window.matchMedia(WIDE_QUERY).addEventListener("change", () => this.placePanel());
    api.onSessionChange((session) => {
      if (!session) this.loggedOut(t("Your session has ended. Please sign in again."));
    });
    this.endpointsReady = loadEndpoints();
    i18n.wire();
    i18n.onChange(() => this.languageChanged());
    this.textsReady = i18n.load();
    const token = linkToken();
    if (location.hash.startsWith("#sso")) {
      Promise.all([factors.ssoReturn(), this.textsReady]).then(([back]) => {
        if (back && back.login) this.signedIn(back.login);
        else this.showLogin(back && back.error);
      });
    } else if (token) {
      this.textsReady.then(() =>
        showSetPassword(token, { onDone: (username, message) => this.showLogin(message, username) }),
      );
    } else if (api.currentSession()) this.loggedIn(this.endpointFromLocation(), { push: false });
    else {
      // A new tab: another tab of this browser may hold the session (a deep link opened beside the app).
      Promise.all([api.askOtherTabs(), this.textsReady]).then(([session]) => {
        if (session) this.loggedIn(this.endpointFromLocation(), { push: false });
        else this.showLogin();
      });
    }
  }

  endpointFromLocation() {
    const hash = decodeURIComponent(location.hash.slice(1));
    return hash.startsWith("/profile/") ? hash : HOME;
  }

  showLogin(message, username) {
    document.title = `${t("Sign in")} · doctordesk`;
    $("topbar").hidden = true;
    $("main-screen").hidden = true;
    $("panel").hidden = true;
    $("login").hidden = false;
    $("enrol").hidden = true;
    $("login-otp-field").hidden = true;
    $("login-otp").value = "";
    $("login-passkey").hidden = !factors.passkeysWork();
    factors.showProviders();
    document.body.dataset.view = "login";
    const error = $("login-error");
    error.hidden = !message;
    error.textContent = message || "";
    $("login-password").value = "";
    if (username) $("login-username").value = username;
    (username ? $("login-password") : $("login-username")).focus();
  }

  async submitLogin(event) {
    event.preventDefault();
    const username = $("login-username").value.trim();
    const password = $("login-password").value;
    const error = $("login-error");
    if (!username || !password) {
      error.textContent = t("Enter your username and password.");
      error.hidden = false;
      (username ? $("login-password") : $("login-username")).focus();
      return;
    }
    const submit = $("login-submit");
    submit.disabled = true;
    submit.textContent = t("Signing in…");
    const otp = $("login-otp-field").hidden ? "" : $("login-otp").value.trim();
    try {
      await api.login(username, password, otp);
      error.hidden = true;
      // A page asked for before signing in (a SMART app's consent page) opens after it; else the list.
      this.loggedIn(this.endpointFromLocation(), { push: true });
    } catch (e) {
      this.loginFailed(e, { otp });
    } finally {
      submit.disabled = false;
      submit.textContent = t("Sign in");
    }
  }

  loginFailed(e, { otp }) {
    const error = $("login-error");
    const code = e instanceof api.ApiError && e.body ? e.body.code : null;
    let text = t("The service cannot be reached. Please try again.");
    let focus = $("login-password");
    if (code === "MFA_REQUIRED") {
      $("login-otp-field").hidden = false;
      text = t("Enter the code from your authenticator app or a recovery code.");
      focus = $("login-otp");
    } else if (code === "MFA_ENROLMENT_REQUIRED") {
      error.hidden = true;
      factors.showEnrolment(e.body.enrolment_token, { onDone: (login) => this.signedIn(login) });
      return;
    } else if (e instanceof api.ApiError) {
      text =
        e.status === 401
          ? otp
            ? spentOrWrong(e.body)
            : t("Wrong username or password.")
          : e.status === 429
            ? throttled(e.retryAfter)
            : e.body.message || e.message;
      if (otp) focus = $("login-otp");
    }
    error.textContent = text;
    error.hidden = false;
    focus.focus();
  }

  async passkeyLogin() {
    const error = $("login-error");
    try {
      this.signedIn(await factors.signInWithPasskey());
    } catch (e) {
      error.textContent = e instanceof api.ApiError ? e.body.message || e.message : t("No passkey was used.");
      error.hidden = false;
    }
  }

  signedIn(login) {
    api.signedIn(login);
    $("login-error").hidden = true;
    this.loggedIn(HOME, { push: true });
  }

  async loggedIn(endpoint, { push }) {
    const session = api.currentSession();
    $("login").hidden = true;
    $("enrol").hidden = true;
    $("topbar").hidden = false;
    $("main-screen").hidden = false;
    document.body.dataset.view = "app";
    $("nav-messages").hidden = !["support", "admin"].includes(session.user.role);
    $("user-name").textContent = session.user.display_name;
    $("user-role").textContent = roleName(session.user.role);
    document.body.dataset.role = session.user.role;
    if (!this.main) this.main = new Screen($("main-screen"), this, { slot: "main" });
    await this.endpointsReady;
    await this.textsReady;
    await i18n.adopt(session.user);
    // Login: the stream is closed and opened again with the new token (spec 5.2).
    this.link.restart();
    this.showMain(endpoint, { push });
    const panel = sessionStorage.getItem(PANEL_KEY);
    if (panel && panel.startsWith("/profile/") && api.layout() === "desktop") this.openPanel(panel, { focus: false });
  }

  async logout() {
    this.loggingOut = true;
    this.link.stop();
    this.closeScreens();
    try {
      await api.logout(); // the session listener shows the login screen
    } finally {
      this.loggingOut = false;
    }
    // Logout: the stream of the old token is closed; a new one opens with the next login's token.
    this.link.restart();
  }

  loggedOut(message) {
    this.link.stop();
    this.closeScreens();
    history.replaceState(null, "", location.pathname);
    this.showLogin(this.loggingOut ? undefined : message);
  }

  closeScreens() {
    this.closePanel();
    if (this.main) this.main.close();
    this.main = null;
    this.mainEndpoint = null;
  }

  // --- screens ----------------------------------------------------------------------------------------------------

  // Opens a screen PUT by an action: chat links open in the panel on desktop (spec 4.2), everything else in main.
  open(endpoint, { from, panel }) {
    if (panel && api.layout() === "desktop") {
      this.openPanel(endpoint);
      return;
    }
    if (from === this.panel && this.panel) this.closePanel();
    this.navigate(endpoint);
  }

  navigate(endpoint, { from } = {}) {
    if (from && from === this.panel) {
      // The panel's screen closed: the main screen catches up with what happened there.
      this.closePanel();
      if (endpoint !== this.mainEndpoint) this.showMain(endpoint, { push: true });
      // PUT again: the server learns this client shows the main screen again (presence) and it catches up.
      else if (this.main && this.main.page) this.main.open(this.main.page.endpoint, { focus: false });
      return;
    }
    this.showMain(endpoint, { push: true });
  }

  showMain(endpoint, { push }) {
    if (!this.main) return;
    if (push && endpoint !== this.mainEndpoint) history.pushState({ endpoint }, "", `#${endpoint}`);
    else if (!push) history.replaceState({ endpoint }, "", `#${endpoint}`);
    this.mainEndpoint = endpoint;
    $("back").hidden = endpoint === HOME || endpoint === THREADS;
    for (const link of document.querySelectorAll("[data-nav]")) {
      if (link.dataset.nav === endpoint) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (this.panel && endpoint === this.panelEndpoint) this.closePanel();
    this.main.open(endpoint);
  }

  back() {
    if (history.state && history.length > 1) history.back();
    else this.navigate(HOME);
  }

  openPanel(endpoint, { focus = true } = {}) {
    const opener = document.activeElement;
    if (opener && !$("panel").contains(opener)) this.panelOpener = opener;
    if (!this.panel) {
      this.panel = new Screen($("panel-screen"), this, { slot: "panel" });
      this.panel.closed = false;
    }
    this.panelEndpoint = endpoint;
    sessionStorage.setItem(PANEL_KEY, endpoint);
    $("panel").hidden = false;
    this.placePanel();
    this.panel.open(endpoint, { focus });
  }

  requestPanelClose() {
    if (!this.panel) return;
    const close = this.panel.view.model("close");
    if (close && close.action && close.enabled !== false) this.panel.act(close);
    else this.closePanel();
  }

  closePanel() {
    if (!this.panel) return;
    const panel = this.panel;
    this.panel = null;
    this.panelEndpoint = null;
    sessionStorage.removeItem(PANEL_KEY);
    panel.close();
    $("panel").hidden = true;
    document.body.classList.remove("has-embedded-panel", "has-floating-panel");
    // Focus returns to the control that opened the panel (or the main heading when it is gone).
    const opener = this.panelOpener;
    this.panelOpener = null;
    if (opener && opener.isConnected) opener.focus();
    else if (this.main) this.main.body.querySelector("h1")?.focus();
  }

  // Desktop: embedded beside the appointment list on wide screens, floating at the bottom right otherwise.
  placePanel() {
    const panel = $("panel");
    const embedded =
      window.matchMedia(WIDE_QUERY).matches && this.main && this.main.page && this.main.page.poll === HOME;
    panel.classList.toggle("panel--embedded", Boolean(embedded));
    panel.classList.toggle("panel--floating", !embedded);
    document.body.classList.toggle("has-embedded-panel", Boolean(embedded) && !panel.hidden);
    // Floating, it keeps a column of its own at the right: the page's rows and their actions end left of it.
    document.body.classList.toggle("has-floating-panel", !embedded && !panel.hidden);
  }

  // The switch changed the language: the shell's own words now, the screens rendered again by the server.
  languageChanged() {
    const session = api.currentSession();
    if (session) $("user-role").textContent = roleName(session.user.role);
    this.connection($("connection").dataset.status);
    if (document.body.dataset.view === "login") document.title = `${t("Sign in")} · doctordesk`;
    for (const screen of this.screens()) if (screen.page) screen.open(screen.page.endpoint, { focus: false });
  }

  layoutChanged() {
    // The server filters platform elements by X-Layout: load the screens again for the new layout.
    if (!api.currentSession()) return;
    if (api.layout() === "mobile" && this.panel) {
      const endpoint = this.panelEndpoint;
      this.closePanel();
      this.navigate(endpoint);
      return;
    }
    for (const screen of this.screens()) if (screen.page) screen.open(screen.page.endpoint, { focus: false });
  }

  screenShown(screen, page) {
    if (screen === this.main) {
      document.title = `${page.title} · doctordesk`;
      this.placePanel();
    } else {
      $("panel-title").textContent = page.title;
    }
  }

  // --- notices and connection state -------------------------------------------------------------------------------

  notify(notice) {
    if (!notice || !notice.text) return;
    const toast = document.createElement("div");
    toast.className = "toast";
    toast.dataset.tone = notice.level || "info";
    toast.setAttribute("role", notice.level === "error" ? "alert" : "status");
    toast.textContent = notice.text;
    // On a phone one toast at a time, in the top bar's own line: it never covers the list.
    if (api.layout() === "mobile") $("toasts").replaceChildren(toast);
    else $("toasts").append(toast);
    setTimeout(() => toast.remove(), 6000);
  }

  offline(isOffline) {
    if (isOffline) this.connection("offline");
    else {
      if ($("connection").dataset.status === "offline") this.connection(this.link.source ? "live" : "idle");
      this.outbox.flush(); // the service answered: what waits goes now
    }
  }

  connection(status) {
    if (status === "live") this.outbox.flush();
    const labels = { live: "Live", reconnecting: "Reconnecting…", offline: "Offline", blocked: "Polling" };
    const node = $("connection");
    node.dataset.status = status;
    node.querySelector(".connection-text").textContent = labels[status] ? t(labels[status]) : "";
  }
}

const shell = new Shell();
window.doctordesk = { shell }; // for diagnostics and the browser tests
shell.start();
