// Live updates: the organization's realtime channel as server-sent events.
// An EventSource cannot send the bearer header, so each connection first
// gets a one-use ticket (valid 30 seconds) with the session. On any error
// the source is closed (it would retry with the spent ticket) and a new
// ticket is fetched after a growing delay; the last message's id is sent
// as `after` so nothing is missed.

import { orgPath, post } from "./api.js";

export class Live {
  constructor(org, onMessage, onState) {
    this.org = org;
    this.onMessage = onMessage;
    this.onState = onState;
    this.source = null;
    this.lastId = "";
    this.delay = 1000;
    this.timer = 0;
    this.stopped = false;
  }

  async start() {
    this.stopped = false;
    this.onState("connecting");
    let ticket;
    try {
      ticket = await post(orgPath(this.org, "/realtime/tickets"));
    } catch (err) {
      if (err.type === "not_authenticated" || err.status === 404) {
        this.onState("off");
        return;
      }
      this.retry();
      return;
    }
    if (this.stopped) return;
    let url = orgPath(this.org, "/realtime") + "?ticket=" + encodeURIComponent(ticket.ticket);
    if (this.lastId) url += "&after=" + encodeURIComponent(this.lastId);
    const source = new EventSource(url);
    this.source = source;
    source.onopen = () => {
      this.delay = 1000;
      this.onState("live");
    };
    source.onmessage = (e) => {
      if (e.lastEventId) this.lastId = e.lastEventId;
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.onMessage(msg);
    };
    source.onerror = () => {
      source.close();
      if (this.source === source) this.source = null;
      if (!this.stopped) this.retry();
    };
  }

  retry() {
    this.onState("reconnecting");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), this.delay);
    this.delay = Math.min(this.delay * 2, 30000);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
  }
}
