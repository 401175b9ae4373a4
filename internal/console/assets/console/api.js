// The JSON API, called with the person's session token. The token lives in
// memory and in sessionStorage (this tab only, gone when it closes), never
// in localStorage or a cookie.

const TOKEN_KEY = "strongroom.session";

let token = sessionStorage.getItem(TOKEN_KEY);
let onSessionEnd = () => {};

export function hasSession() {
  return Boolean(token);
}

export function setSession(t) {
  token = t;
  sessionStorage.setItem(TOKEN_KEY, t);
}

export function clearSession() {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
}

// whenSessionEnds sets what happens when the service says the session is
// over (401 not_authenticated on a signed-in call).
export function whenSessionEnds(fn) {
  onSessionEnd = fn;
}

// ApiError carries the error envelope: type to branch on, message to show.
export class ApiError extends Error {
  constructor(status, type, message, body) {
    super(message);
    this.status = status;
    this.type = type;
    this.body = body;
  }
}

// call sends one request and returns the decoded JSON answer, or throws an
// ApiError whose message is the envelope's.
export async function call(method, path, body, { signedIn = true } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (signedIn && token) headers.Authorization = "Bearer " + token;
  let resp;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "network", "The service cannot be reached. Check your connection and try again.");
  }
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const e = data && data.error;
    const err = new ApiError(resp.status, (e && e.type) || "http_" + resp.status,
      (e && e.message) || "The service answered " + resp.status + ". Please try again.", data);
    if (signedIn && token && err.type === "not_authenticated") {
      clearSession();
      onSessionEnd(err);
    }
    throw err;
  }
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body, opts) => call("POST", path, body, opts);

export function orgPath(org, rest) {
  return "/api/v1/organizations/" + encodeURIComponent(org) + rest;
}
