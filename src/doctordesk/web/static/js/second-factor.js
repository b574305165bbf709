// Second factors and single sign-on in the shell: the code a sign-in may ask for, setting up a factor when the
// role requires one (an authenticator app or a passkey, then the recovery codes shown once), signing in with a
// passkey, and the "Sign in with …" buttons of the clinic's provider. Every text goes in as textContent.

import * as api from "./api.js";
import { REAUTHENTICATION_REQUIRED } from "./reauth.js";
import { t, tf } from "./texts.js";

const $ = (id) => document.getElementById(id);

// --- WebAuthn: the service speaks base64url JSON, the browser ArrayBuffers ------------------------------------

const fromB64 = (text) => {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0)).buffer;
};
const toB64 = (buffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

function creationOptions(options) {
  return {
    ...options,
    challenge: fromB64(options.challenge),
    user: { ...options.user, id: fromB64(options.user.id) },
    excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })),
  };
}

function requestOptions(options) {
  return {
    ...options,
    challenge: fromB64(options.challenge),
    allowCredentials: (options.allowCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })),
  };
}

// The credential as the object its toJSON() gives (sent as an object, not a JSON string); browsers without toJSON()
// get the same object built by hand.
function credentialJson(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const response = {};
  for (const name of ["clientDataJSON", "attestationObject", "authenticatorData", "signature", "userHandle"]) {
    if (credential.response[name]) response[name] = toB64(credential.response[name]);
  }
  if (credential.response.getTransports) response.transports = credential.response.getTransports();
  const json = {
    id: credential.id,
    rawId: toB64(credential.rawId),
    type: credential.type,
    response,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
  if (credential.authenticatorAttachment) json.authenticatorAttachment = credential.authenticatorAttachment;
  return json;
}

// A request with a token of its own (the enrolment token, before there is a session). With the session's token, a
// change that needs a recent sign-in asks for the password first and is tried once more (reauth.js).
async function call(method, endpoint, options = {}) {
  try {
    return await callOnce(method, endpoint, options);
  } catch (error) {
    const stale = error instanceof api.ApiError && error.body.code === REAUTHENTICATION_REQUIRED;
    if (!stale || options.token || !api.currentSession() || !(await api.reauthenticate())) throw error;
    return callOnce(method, endpoint, options);
  }
}

async function callOnce(method, endpoint, { token = null, json = null } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const session = api.currentSession();
  if (!token && session) headers.Authorization = `Bearer ${session.token}`;
  if (json) headers["Content-Type"] = "application/json";
  const response = await fetch(endpoint, {
    method,
    headers,
    body: json ? JSON.stringify(json) : undefined,
    credentials: "omit",
    cache: "no-store",
  });
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new api.ApiError(response.status, body);
  return body;
}

export function passkeysWork() {
  return typeof window.PublicKeyCredential === "function" && !!navigator.credentials;
}

// Signs in with a passkey of this site; resolves to the login answer.
export async function signInWithPasskey() {
  const { ticket, publicKey } = await call("POST", "/auth/passkey/options");
  const credential = await navigator.credentials.get({ publicKey: requestOptions(publicKey) });
  return call("POST", "/auth/passkey/login", { json: { ticket, credential: credentialJson(credential) } });
}

// Lets the browser create a passkey for this account: the challenge's ticket and the credential as the object its
// toJSON() gives. `token`: the enrolment token at sign-in; without one, the session (asking "Confirm it is you"
// when its sign-in is not recent). Used at enrolment here and by the security page's "Add a passkey" (screen.js).
export async function createPasskey(token = null) {
  const { ticket, publicKey } = await call("POST", "/auth/passkeys/options", { token });
  const credential = await navigator.credentials.create({ publicKey: creationOptions(publicKey) });
  return { ticket, credential: credentialJson(credential) };
}

async function addPasskey(token) {
  const { ticket, credential } = await createPasskey(token);
  return call("POST", "/auth/passkeys", { token, json: { ticket, credential, name: t("Passkey") } });
}

// --- setting up a factor at sign-in ----------------------------------------------------------------------------

// Shows the set-up page for an enrolment token; `onDone(login)` gets the login answer once a factor is on and the
// recovery codes were shown.
export function showEnrolment(token, { onDone }) {
  for (const id of ["topbar", "main-screen", "panel", "login"]) $(id).hidden = true;
  $("enrol").hidden = false;
  for (const id of ["enrol-totp-form", "enrol-codes-step"]) $(id).hidden = true;
  $("enrol-choice").hidden = false;
  $("enrol-passkey").hidden = !passkeysWork();
  const error = $("enrol-error");
  const fail = (e) => {
    error.textContent =
      e instanceof api.ApiError
        ? (e.body && e.body.fields && e.body.fields.code) || (e.body && e.body.message) || e.message
        : t("The passkey could not be created.");
    error.hidden = false;
  };
  const finished = (answer) => {
    error.hidden = true;
    $("enrol-choice").hidden = true;
    $("enrol-totp-form").hidden = true;
    showCodes(answer.recovery_codes || []);
    $("enrol-continue").onclick = () => {
      $("enrol").hidden = true;
      onDone(answer.login);
    };
    $("enrol-continue").focus();
  };
  $("enrol-totp").onclick = async () => {
    try {
      const started = await call("POST", "/auth/mfa/totp", { token });
      // The QR code the service drew, as an image (an SVG in an <img> runs nothing); the key beside it for apps
      // that cannot scan.
      const qr = $("enrol-qr");
      const drawn = typeof started.qr_code === "string" && started.qr_code.startsWith("data:image/svg+xml");
      qr.hidden = !drawn;
      if (drawn) {
        qr.src = started.qr_code;
        qr.alt = t("QR code for your authenticator app");
      }
      $("enrol-secret").textContent = started.secret;
      $("enrol-uri").textContent = started.otpauth_uri;
      $("enrol-choice").hidden = true;
      $("enrol-totp-form").hidden = false;
      $("enrol-code").focus();
    } catch (e) {
      fail(e);
    }
  };
  $("enrol-totp-form").onsubmit = async (event) => {
    event.preventDefault();
    try {
      finished(await call("POST", "/auth/mfa/totp/confirm", { token, json: { code: $("enrol-code").value.trim() } }));
    } catch (e) {
      fail(e);
    }
  };
  $("enrol-passkey").onclick = async () => {
    try {
      finished(await addPasskey(token));
    } catch (e) {
      fail(e);
    }
  };
  $("enrol-title").focus();
}

function showCodes(codes) {
  const list = $("enrol-codes");
  list.replaceChildren(
    ...codes.map((code) => {
      const item = document.createElement("li");
      item.textContent = code;
      return item;
    }),
  );
  $("enrol-codes-note").hidden = codes.length === 0;
  $("enrol-codes-step").hidden = false;
}

// --- single sign-on --------------------------------------------------------------------------------------------

// The "Sign in with …" links of the configured providers.
export async function showProviders() {
  const box = $("login-sso");
  try {
    const { providers } = await call("GET", "/auth/sso");
    box.replaceChildren(
      ...providers.map((provider) => {
        const link = document.createElement("a");
        link.className = "btn btn-block";
        link.href = `/auth/sso/${encodeURIComponent(provider.slug)}/start`;
        link.textContent = tf("Sign in with {name}", { name: provider.name });
        return link;
      }),
    );
    box.hidden = providers.length === 0;
  } catch {
    box.hidden = true;
  }
}

// The provider's way back: `#sso=<ticket>` (redeemed once for a session) or `#sso-error=<code>`. Resolves to the
// login answer, to an error text, or to null when the address holds neither.
export async function ssoReturn() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const ticket = hash.get("sso");
  const failed = hash.get("sso-error");
  if (!ticket && !failed) return null;
  history.replaceState(null, "", location.pathname);
  if (failed === "FORBIDDEN") return { error: t("Your account has no access to doctordesk.") };
  if (failed) return { error: t("The sign-in did not succeed. Please try again.") };
  try {
    return { login: await call("POST", "/auth/sso/redeem", { json: { ticket } }) };
  } catch {
    return { error: t("The sign-in did not succeed. Please try again.") };
  }
}
