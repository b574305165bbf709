// Requests to the service: the bearer token (kept in memory and sessionStorage, never in a URL), the tab's client
// id and layout headers on every call, form encoding (multipart when a file is sent).

import { REAUTHENTICATION_REQUIRED, confirmIdentity } from "./reauth.js";
import { t } from "./texts.js";

const TOKEN_KEY = "doctordesk.session";
const LANGUAGE_KEY = "doctordesk.language";
export const MOBILE_QUERY = "(max-width: 719.98px)";

function randomId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// One id per tab instance: presence and real-time routing key this tab's screens on it.
export const clientId = `web-${randomId()}`;

let session = null;
try {
  session = JSON.parse(sessionStorage.getItem(TOKEN_KEY) || "null");
} catch {
  session = null;
}

const listeners = new Set();

export function currentSession() {
  return session;
}

export function setSession(value) {
  session = value;
  if (value) sessionStorage.setItem(TOKEN_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(TOKEN_KEY);
  holdSignedIn();
  for (const listener of listeners) listener(session);
}

// Every signed-in tab holds a shared Web Lock: a new tab sees from the browser's lock list whether any tab could
// answer it, and without one shows the login at once instead of waiting for answers that cannot come.
const SIGNED_IN_LOCK = "doctordesk.signed-in";
let releaseSignedIn = null;
let askingForLock = false;

function holdSignedIn() {
  if (!navigator.locks || !navigator.locks.request) return;
  if (!session && releaseSignedIn) {
    releaseSignedIn();
    releaseSignedIn = null;
  } else if (session && !releaseSignedIn && !askingForLock) {
    askingForLock = true;
    navigator.locks.request(SIGNED_IN_LOCK, { mode: "shared" }, () => {
      askingForLock = false;
      if (!session) return undefined;
      return new Promise((resolve) => {
        releaseSignedIn = resolve;
      });
    });
  }
}

async function anotherTabSignedIn() {
  if (!navigator.locks || !navigator.locks.query) return true; // cannot tell: ask
  try {
    const state = await navigator.locks.query();
    return state.held.some((lock) => lock.name === SIGNED_IN_LOCK);
  } catch {
    return true;
  }
}
holdSignedIn(); // a session restored from this tab's storage

// The tabs of one browser share the signed-in session: a tab opened without one (a new tab on a deep URL) asks
// the others over a same-origin BroadcastChannel and takes the first answer. The token still never goes into a
// URL or persistent storage; with no other tab signed in (none holds the signed-in lock above), the tab shows the
// login at once.
const shareChannel = typeof BroadcastChannel === "function" ? new BroadcastChannel("doctordesk.session-share") : null;
if (shareChannel) {
  shareChannel.addEventListener("message", (event) => {
    if (event.data && event.data.kind === "ask" && session) shareChannel.postMessage({ kind: "session", session });
  });
}

export async function askOtherTabs(waitMs = 300) {
  if (session || !shareChannel) return session;
  if (!(await anotherTabSignedIn())) return null;
  return new Promise((resolve) => {
    let timer = null;
    const done = (value) => {
      shareChannel.removeEventListener("message", onAnswer);
      clearTimeout(timer);
      resolve(value);
    };
    const onAnswer = (event) => {
      const answer = event.data;
      if (!answer || answer.kind !== "session" || !answer.session) return;
      if (typeof answer.session.token !== "string" || !answer.session.user) return;
      setSession(answer.session);
      done(answer.session);
    };
    shareChannel.addEventListener("message", onAnswer);
    timer = setTimeout(() => done(null), waitMs);
    shareChannel.postMessage({ kind: "ask" });
  });
}

export function onSessionChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// The language chosen with the switch in this browser (null: the browser's own Accept-Language decides).
export function chosenLanguage() {
  try {
    return localStorage.getItem(LANGUAGE_KEY);
  } catch {
    return null;
  }
}

export function setLanguage(code) {
  try {
    localStorage.setItem(LANGUAGE_KEY, code);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
  chosen = code;
}

let chosen = chosenLanguage();

export function layout() {
  return window.matchMedia(MOBILE_QUERY).matches ? "mobile" : "desktop";
}

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `Request failed (${status})`);
    this.status = status;
    this.body = body || { kind: "error", code: "HTTP_" + status, message: this.message, fields: {} };
  }
}

export class NetworkError extends Error {}

// Encodes a list of [name, value] pairs (values are strings or File objects).
function encode(fields) {
  if (fields.some(([, value]) => value instanceof Blob)) {
    const data = new FormData();
    for (const [name, value] of fields) data.append(name, value);
    return data;
  }
  const params = new URLSearchParams();
  for (const [name, value] of fields) params.append(name, value);
  return params;
}

// Sends one request and returns the parsed JSON body (null for 204); throws ApiError or NetworkError.
export async function request(method, endpoint, options = {}) {
  try {
    return await sendRetryingBusy(method, endpoint, options);
  } catch (error) {
    // A change of how the account signs in needs a recent sign-in: ask for the password, then try once more.
    if (!(error instanceof ApiError) || error.body.code !== REAUTHENTICATION_REQUIRED || !session) throw error;
    if (!(await reauthenticate())) throw error;
    return send(method, endpoint, options);
  }
}

// The answer "busy, nothing changed, try again at the stated time" (503 SERVICE_BUSY with Retry-After,
// docs/protocol.md#busy).
export function isBusy(error) {
  return error instanceof ApiError && error.status === 503 && error.body?.code === "SERVICE_BUSY" && error.retryAfter > 0;
}

// `retryBusy` (a user's action, not a poll): a busy answer changed nothing, so the same request is sent again after
// its Retry-After (at most BUSY_WAIT_MAX seconds), up to that many times, before the user sees an error. Polls do
// not retry here: they come back at their Retry-After instead of their timeout (screen.js).
const BUSY_WAIT_MAX = 5;

async function sendRetryingBusy(method, endpoint, options) {
  for (let left = options.retryBusy || 0; ; left -= 1) {
    try {
      return await send(method, endpoint, options);
    } catch (error) {
      if (left <= 0 || !isBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(error.retryAfter, BUSY_WAIT_MAX) * 1000));
    }
  }
}

// Asks the user to confirm it is them (reauth.js); true once the service took the password (and code).
export function reauthenticate() {
  return confirmIdentity((fields) => send("POST", "/auth/reauthenticate", { fields }));
}

async function send(method, endpoint, { fields = null, state = null, signal = undefined, keepalive = false } = {}) {
  if (typeof endpoint !== "string" || !endpoint.startsWith("/") || endpoint.startsWith("//")) {
    throw new Error(`refusing a request outside the service: ${endpoint}`);
  }
  const headers = { Accept: "application/json", "X-Client-Id": clientId, "X-Layout": layout() };
  if (session) headers.Authorization = `Bearer ${session.token}`;
  if (state) headers["X-Screen-State"] = state;
  if (chosen) headers["Accept-Language"] = chosen;
  const init = { method, headers, signal, keepalive, credentials: "omit", cache: "no-store" };
  if (fields && fields.length) init.body = encode(fields);
  let response;
  try {
    response = await fetch(endpoint, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new NetworkError(t("The service cannot be reached. Retrying shortly."));
  }
  let body = null;
  if (response.status !== 204) {
    try {
      body = await response.json();
    } catch {
      body = null;
    }
  }
  if (!response.ok) {
    const error = new ApiError(response.status, body);
    // A throttled request says when to try again (whole seconds).
    error.retryAfter = Number(response.headers.get("Retry-After")) || null;
    if (response.status === 401 && session) {
      setSession(null);
      error.sessionEnded = true;
    }
    throw error;
  }
  return body;
}

// An authenticated download (attachments): returns a Blob.
export async function fetchBlob(url) {
  if (!url.startsWith("/") || url.startsWith("//")) throw new Error("refusing a download outside the service");
  const headers = { "X-Client-Id": clientId };
  if (session) headers.Authorization = `Bearer ${session.token}`;
  const response = await fetch(url, { headers, credentials: "omit" });
  if (!response.ok) throw new ApiError(response.status, null);
  return response.blob();
}

export async function login(username, password, otp = "") {
  const fields = [
    ["username", username],
    ["password", password],
  ];
  if (otp) fields.push(["otp", otp]);
  return signedIn(await request("POST", "/auth/login", { fields }));
}

// Keeps the session of a login answer (password, passkey, enrolment or single sign-on alike).
export function signedIn(body) {
  setSession({ token: body.access_token, user: body.user });
  return body.user;
}

export async function logout() {
  try {
    if (session) await request("POST", "/auth/logout");
  } catch {
    // The token is forgotten either way.
  } finally {
    setSession(null);
  }
}
