// The JSON API, called with the person's session token. The token lives in
// memory and in sessionStorage (this tab only, gone when it closes), never
// in localStorage or a cookie.

const TOKEN_KEY = "strongroom.session";

let token = sessionStorage.getItem(TOKEN_KEY);
let onSessionEnd = () => {};
let onStepUp = null;

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

// whenStepUpNeeded sets who answers a 403 step_up_required: fn(challenge)
// resolves once the challenge is satisfied (the call is then sent once
// more) or rejects with the reason the person gave up.
export function whenStepUpNeeded(fn) {
  onStepUp = fn;
}

// ApiError carries the error envelope: type to branch on, message to show,
// details (field, message) for the form that sent it.
export class ApiError extends Error {
  constructor(status, type, message, body) {
    super(message);
    this.status = status;
    this.type = type;
    this.body = body;
    this.details = (body && body.error && body.error.details) || [];
  }
}

// call sends one request and returns the decoded JSON answer, or throws an
// ApiError whose message is the envelope's. Options: signedIn (send the
// session's bearer, default true), headers (extra headers), stepUp (answer
// a step_up_required through whenStepUpNeeded and send again, default
// true; false hands the error to the caller), raw (return the Response,
// for a download).
export async function call(method, path, body, opts = {}) {
  const { signedIn = true, headers: extra = {}, stepUp = true, raw = false } = opts;
  const headers = { Accept: "application/json", ...extra };
  const isForm = body instanceof FormData || body instanceof Blob;
  if (body !== undefined && !isForm) headers["Content-Type"] = "application/json";
  if (signedIn && token) headers.Authorization = "Bearer " + token;
  let resp;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "network", "The service cannot be reached. Check your connection and try again.");
  }
  if (raw && resp.ok) return resp;
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const err = errorOf(resp.status, data);
    if (signedIn && token && err.type === "not_authenticated") {
      clearSession();
      onSessionEnd(err);
    }
    if (err.type === "step_up_required" && stepUp && onStepUp && err.body.error.step_up) {
      await onStepUp(err.body.error.step_up);
      return call(method, path, body, { ...opts, stepUp: false });
    }
    throw err;
  }
  return data;
}

function errorOf(status, data) {
  const e = data && data.error;
  return new ApiError(status, (e && e.type) || "http_" + status,
    (e && e.message) || "The service answered " + status + ". Please try again.", data);
}

export const get = (path, opts) => call("GET", path, undefined, opts);
export const post = (path, body, opts) => call("POST", path, body, opts);
export const patch = (path, body, opts) => call("PATCH", path, body, opts);
export const put = (path, body, opts) => call("PUT", path, body, opts);
export const del = (path, opts) => call("DELETE", path, undefined, opts);

// upload sends body (a FormData or a File) with progress: onProgress(sent,
// total) as it goes. fetch cannot report an upload's progress; an
// XMLHttpRequest can.
export function upload(method, path, body, onProgress, headers = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    xhr.setRequestHeader("Accept", "application/json");
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    if (token) xhr.setRequestHeader("Authorization", "Bearer " + token);
    xhr.upload.onprogress = (e) => onProgress && onProgress(e.loaded, e.lengthComputable ? e.total : 0);
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload did not reach the service. Check your connection and try again."));
    xhr.onload = () => {
      let data = null;
      try {
        data = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        data = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(data);
        return;
      }
      const err = errorOf(xhr.status, data);
      if (token && err.type === "not_authenticated") {
        clearSession();
        onSessionEnd(err);
      }
      reject(err);
    };
    xhr.send(body);
  });
}

// download fetches path with the session and hands the answer to the
// browser as a file named filename.
export async function download(path, filename, accept = "*/*") {
  const resp = await call("GET", path, undefined, { raw: true, headers: { Accept: accept } });
  const url = URL.createObjectURL(await resp.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function orgPath(org, rest) {
  return "/api/v1/organizations/" + encodeURIComponent(org) + rest;
}

// idempotencyKey is a fresh key for one operation the person started: a
// retry of the same click sends the same key.
export function idempotencyKey() {
  return crypto.randomUUID();
}
