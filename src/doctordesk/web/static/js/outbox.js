// Sends that wait for the connection (docs/web-app.md#offline). A control whose `props.idempotency` names a form
// field (the chat's send: `client-message-id`) gets a fresh random id in that field on each activation; when the
// request cannot reach the service, the request is held here with its fields and id, and sent again when the
// connection is back (the browser's `online`, the stream live again, any answer from the service) or every few
// seconds meanwhile. The service keeps one message per sender and id, so a send that did arrive before the
// connection broke is not stored twice.

import { NetworkError, request } from "./api.js";

const RETRY_MS = 4000;

export function newRequestId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Outbox {
  constructor() {
    this.items = new Map(); // key (screen slot and element id) → {screen, method, endpoint, fields, id}
    this.timer = null;
    this.flushing = false;
  }

  get(key) {
    return this.items.get(key) || null;
  }

  hold(key, item) {
    this.items.set(key, item);
    this.arm();
  }

  arm() {
    if (this.timer !== null || !this.items.size) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, RETRY_MS);
  }

  // Sends what waits, oldest first; stops at the first that still cannot reach the service.
  async flush() {
    if (this.flushing || !this.items.size) return;
    this.flushing = true;
    try {
      for (const [key, item] of [...this.items]) {
        let body;
        try {
          body = await request(item.method, item.endpoint, { fields: item.fields, state: item.screen.state });
        } catch (error) {
          if (error instanceof NetworkError) break;
          this.items.delete(key);
          item.screen.heldFailed(error);
          continue;
        }
        this.items.delete(key);
        item.screen.heldSent(body);
      }
    } finally {
      this.flushing = false;
      this.arm();
    }
  }
}
