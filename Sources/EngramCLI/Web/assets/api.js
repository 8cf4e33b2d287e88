// The JSON API of `engram serve` (docs/web.md) and small DOM helpers shared by the tabs.

const tokenKey = 'engram-token';

function headers(json) {
  const result = {};
  const token = sessionStorage.getItem(tokenKey);
  if (token) result.Authorization = 'Bearer ' + token;
  if (json) result['Content-Type'] = 'application/json';
  return result;
}

// Without the secret of the launch (the cookie the printed address sets) or a user's token
// (`engram serve --users`), the API answers 401: ask for a token once per tab.
function askToken() {
  const token = window.prompt('This server needs a token: your user token, or the secret in the address engram serve printed:');
  if (token) sessionStorage.setItem(tokenKey, token.trim());
}

/** Calls the API; resolves with the JSON answer, rejects with an Error of its sentence. */
export async function api(path, { method = 'GET', body, signal } = {}) {
  const response = await fetch(path, {
    method, signal, credentials: 'same-origin', headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) askToken();
  // A request aborted while its body arrives (a newer search replaced it) stays aborted,
  // rather than resolving with an empty answer.
  const data = await response.json().catch((error) => {
    if (error.name === 'AbortError') throw error;
    return {};
  });
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

/** POSTs `body` and calls `onEvent(name, data)` for each server-sent event of the answer. */
export async function stream(path, body, onEvent) {
  const response = await fetch(path, {
    method: 'POST', credentials: 'same-origin', headers: headers(true), body: JSON.stringify(body),
  });
  if (response.status === 401) askToken();
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new Error(data.error || `${response.status} ${response.statusText}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}

/** Creates an element with attributes (`text` sets its text) and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** `2025-06-17 09:00` in the browser's zone from an ISO 8601 time. */
export function shortDate(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} `
    + `${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `YYYY-MM-DD` of a Date in the browser's zone. */
export function dayOf(date) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Shows a sentence at the top of the page (an error the user should see). */
export function notify(text) {
  const notice = document.getElementById('notice');
  notice.textContent = text;
  notice.hidden = !text;
}

/** Asks in the page's dialog; resolves true when the user confirms. */
export function ask(title, text, yes) {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-yes').textContent = yes;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}
