// Real-time delivery in the browser: one server-sent-event stream per browser and user, opened by a leader tab
// (Web Locks) and shared with the other tabs (BroadcastChannel); the messages of spec 2.1 handled as 6.1 says.

import { clientId, currentSession, request } from "./api.js";
import { endpointMatcher, InvalidMessage, parseMessage } from "./message.js";

// Where the stream lives (docs/realtime.md): a single-use ticket is obtained with the token, so the token itself
// never appears in a URL.
export const STREAM = {
  ticket: "/profile/stream/ticket",
  stream: "/profile/stream",
  endpoints: "/realtime/endpoints",
};

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 10000;

let isEndpoint = () => false;

// The PATCH endpoints a message may name: read once per page load from the service's short list of them (the
// browser keeps its copy and has it confirmed with a 304).
export async function loadEndpoints() {
  try {
    const response = await fetch(STREAM.endpoints, { credentials: "omit" });
    const listed = await response.json();
    const templates = Array.isArray(listed.patch_endpoints) ? listed.patch_endpoints : [];
    isEndpoint = endpointMatcher(templates.filter((template) => typeof template === "string"));
  } catch {
    isEndpoint = () => false;
  }
}

export function isPatchEndpoint(path) {
  return isEndpoint(path);
}

// Applies one real-time message to the active screens (spec 6.1). `screens` lists the open screens, the main one
// first. Invalid messages and heartbeats are ignored.
export function handleMessage(data, screens) {
  let message;
  try {
    message = parseMessage(data, isEndpoint);
  } catch (error) {
    if (error instanceof InvalidMessage) return { ignored: true };
    throw error;
  }
  if (message.timeout) {
    // Rule 1: cancel every patch timer first, then poll the current screens (which restarts their timers).
    for (const screen of screens) screen.cancelTimer();
    for (const screen of screens) if (screen.poll) screen.patch(screen.poll, { reschedule: true });
  }
  if (message.endpoint) {
    // Rule 3: PATCH now and apply to the screen it belongs to; the poll schedule is not touched.
    const target = screens.find((s) => s.owns(message.endpoint));
    if (target) target.patch(message.endpoint);
  }
  return message;
}

// The stream, shared by the tabs of one browser and user. The server routes messages by client id to the last
// screen that client PUT, so the stream belongs to the tab the user is looking at: a tab that gains focus takes
// the lead (Web Locks `steal`), the former leader closes its stream, and the other tabs keep their poll cycles and
// receive the leader's messages over a BroadcastChannel (a Timeout makes every tab poll at once).
export class RealtimeLink {
  constructor({ onMessage, onStatus, onReconnect }) {
    this.onMessage = onMessage;
    this.onReconnect = onReconnect || (() => {});
    this.onStatus = onStatus || (() => {});
    this.source = null;
    this.channel = null;
    this.release = null;
    this.retryTimer = null;
    this.retryMs = RETRY_MIN_MS;
    this.token = null;
    this.lockName = null;
    this.connectedOnce = false;
    this.running = false;
    this.blocked = false; // set by tests: the stream stays closed, polling alone keeps the screens current
    this.onFocus = () => this.claim();
    window.addEventListener("focus", this.onFocus);
    // The browser knows first when the network goes: say so at once instead of "Live" until a request fails,
    // and connect again as soon as it is back (not after the retry delay).
    window.addEventListener("offline", () => this.wentOffline());
    window.addEventListener("online", () => this.cameOnline());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.claim();
    });
  }

  // (Re)starts everything for the current session: called on login, logout and token change (spec 5.2).
  restart() {
    this.stop();
    const session = currentSession();
    if (!session) return;
    this.running = true;
    this.token = session.token;
    this.lockName = `doctordesk-stream-${session.user.id}`;
    this.channel = new BroadcastChannel(this.lockName);
    this.channel.onmessage = (event) => {
      const msg = event.data || {};
      if (msg.type === "message" && typeof msg.data === "string" && !this.leader) this.onMessage(msg.data);
      if (msg.type === "status" && !this.leader) this.onStatus(msg.status);
    };
    if (navigator.locks && navigator.locks.request) this.requestLead({ steal: document.hasFocus() });
    else this.lead();
  }

  requestLead({ steal }) {
    const name = this.lockName;
    const token = this.token;
    const options = steal ? { steal: true } : {};
    navigator.locks
      .request(name, options, () => {
        if (!this.running || this.token !== token) return undefined;
        this.lead();
        // Hold the lock while this tab leads.
        return new Promise((resolve) => {
          this.release = resolve;
        });
      })
      .catch(() => {
        // Another tab stole the lead: stop streaming and queue up to lead again when it leaves.
        if (this.token !== token || !this.running) return;
        this.follow();
        this.requestLead({ steal: false });
      });
  }

  claim() {
    if (!this.running || this.leader || !navigator.locks) return;
    this.requestLead({ steal: true });
  }

  lead() {
    this.leading = true;
    // A tab that followed another has screens the stream did not serve: it catches up once connected.
    this.connectedOnce = this.connectedOnce || Boolean(this.followed);
    this.open();
  }

  follow() {
    this.followed = true;
    this.leading = false;
    this.release = null;
    clearTimeout(this.retryTimer);
    if (this.source) this.source.close();
    this.source = null;
  }

  stop() {
    this.running = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.source) this.source.close();
    this.source = null;
    if (this.release) this.release();
    this.release = null;
    this.leading = false;
    if (this.channel) this.channel.close();
    this.channel = null;
    this.connectedOnce = false;
    this.followed = false;
    this.retryMs = RETRY_MIN_MS;
    this.onStatus("idle");
  }

  get leader() {
    return Boolean(this.leading);
  }

  status(value) {
    this.onStatus(value);
    if (this.channel) this.channel.postMessage({ type: "status", status: value });
  }

  async open() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.source) this.source.close();
    this.source = null;
    const session = currentSession();
    if (!this.running || !this.leading || !session || session.token !== this.token) return;
    if (this.blocked) {
      this.status("blocked");
      return;
    }
    let ticket;
    try {
      ticket = (await request("POST", STREAM.ticket)).ticket;
    } catch (error) {
      if (error.status === 401) return; // the session ended: the shell logs out and restarts the link
      this.status("reconnecting");
      this.retryLater();
      return;
    }
    if (!this.running || !this.leading || currentSession() !== session) return;
    const query = new URLSearchParams({ ticket, client: clientId });
    const source = new EventSource(`${STREAM.stream}?${query}`);
    this.source = source;
    let opened = false;
    source.onopen = () => {
      opened = true;
      this.retryMs = RETRY_MIN_MS;
      this.status("live");
      // After a gap (a restart, a network problem, another tab leading) the screens are loaded again: that
      // recovers what was missed and tells the server again which screens this client shows (its presence does
      // not survive a restart).
      if (this.connectedOnce) this.onReconnect();
      this.connectedOnce = true;
    };
    source.onmessage = (event) => this.deliver(event.data);
    source.onerror = () => {
      if (this.source !== source) return;
      if (source.readyState === EventSource.CLOSED && opened) {
        // The browser reports the stream closed: open a new one with the current token now.
        this.status("reconnecting");
        this.open();
      } else {
        // A network problem (or a stream refused before it opened): our own reconnect after a short delay,
        // with a fresh ticket (the browser's own retry would reuse the spent one).
        source.close();
        this.source = null;
        this.status("reconnecting");
        this.retryLater();
      }
    };
  }

  wentOffline() {
    if (!this.running) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.source) this.source.close();
    this.source = null;
    this.onStatus("offline");
  }

  cameOnline() {
    if (!this.running) return;
    this.retryMs = RETRY_MIN_MS;
    if (this.leading) {
      this.status("reconnecting");
      this.open();
    } else this.onStatus("idle");
  }

  retryLater() {
    clearTimeout(this.retryTimer);
    const delay = this.retryMs;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  deliver(data) {
    this.onMessage(data);
    if (this.channel) this.channel.postMessage({ type: "message", data });
  }
}

export { clientId };
