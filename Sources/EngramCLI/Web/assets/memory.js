// Memory: hybrid search as you type (each hit's BM25, cosine and retrievers), filters,
// forget with confirmation, edit a memory's text or kind, and a session's turns in order.
import { api, el, shortDate, notify, ask } from './api.js';

const kinds = ['fact', 'preference', 'note', 'summary', 'event'];
// Each search's time in the browser (request to parsed answer), read by scripts/web-e2e.py.
window.engramSearchTimings = [];
window.engramSearchServerTimings = [];

export function initMemory() {
  const $ = (id) => document.getElementById(id);
  const query = $('memory-query');
  const kind = $('memory-kind');
  const since = $('memory-since');
  const until = $('memory-until');
  const session = $('memory-session');
  const status = $('memory-status');
  const results = $('memory-results');
  const sessionView = $('memory-session-view');
  let controller = null;
  let timer = null;
  let started = false;

  function number(value) {
    return value === null || value === undefined ? '–' : value.toFixed(3);
  }

  function hitItem(hit) {
    const isMemory = hit.kind === 'memory';
    const text = el('p', { class: 'text', text: hit.text });
    const meta = el('div', { class: 'meta' },
      el('span', { class: 'badge', text: hit.memory_kind || (hit.kind === 'message' ? 'turn' : hit.kind) }),
      el('span', { text: `#${hit.id}` }),
      el('time', { datetime: hit.date, text: shortDate(hit.date) }),
      hit.speaker ? el('span', { text: hit.speaker }) : null,
      hit.provenance ? el('span', { text: 'found by ' + (hit.provenance.join(', ') || '–') }) : null,
      'bm25' in hit ? el('span', { text: `BM25 ${number(hit.bm25)}` }) : null,
      'cosine' in hit ? el('span', { text: `cosine ${number(hit.cosine)}` }) : null);
    const actions = el('div', { class: 'actions' });
    if (hit.session) {
      actions.append(el('button', { type: 'button', text: `Session #${hit.session}`,
        'aria-label': `Show session ${hit.session}`, onclick: () => showSession(hit.session) }));
    }
    if (isMemory) {
      actions.append(el('button', { type: 'button', text: 'Edit', 'aria-label': `Edit memory ${hit.id}`,
        onclick: () => edit(item, hit) }));
    }
    actions.append(el('button', { type: 'button', class: 'danger', text: 'Forget',
      'aria-label': `Forget ${hit.kind} ${hit.id}`, onclick: () => forget(hit) }));
    const item = el('li', { 'data-id': hit.id, 'data-kind': hit.kind }, text, meta, actions);
    return item;
  }

  function render(items, label) {
    results.replaceChildren(...items.map(hitItem));
    status.textContent = label;
  }

  async function refresh() {
    if (controller) controller.abort();
    controller = new AbortController();
    const words = query.value.trim();
    sessionView.hidden = true;
    results.hidden = false;
    try {
      if (!words) {
        const path = kind.value && kind.value !== 'memory' ? null : '/api/memories?limit=50';
        if (!path) { render([], 'Type to search.'); return; }
        const { memories } = await api(path, { signal: controller.signal });
        render(memories, memories.length ? 'Recent memories' : 'No memories yet.');
        return;
      }
      const parameters = new URLSearchParams({ q: words, k: '20' });
      if (kind.value) parameters.set('kinds', kind.value);
      if (since.value) parameters.set('since', since.value);
      if (until.value) parameters.set('until', until.value);
      if (session.value.trim()) parameters.set('session', session.value.trim());
      const started = performance.now();
      const { hits, elapsed_ms: elapsed } = await api('/api/search?' + parameters, { signal: controller.signal });
      window.engramSearchTimings.push(performance.now() - started);
      window.engramSearchServerTimings.push(elapsed);
      render(hits, hits.length ? `${hits.length} hit${hits.length === 1 ? '' : 's'}` : 'No matches.');
    } catch (error) {
      if (error.name !== 'AbortError') status.textContent = error.message;
    }
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 60);
  }

  async function forget(hit) {
    try {
      const preview = await api('/api/forget', { method: 'POST', body: { kind: hit.kind, id: hit.id, dry_run: true } });
      const also = preview.also ? ` It ${preview.also}.` : '';
      const shown = hit.text.length > 120 ? hit.text.slice(0, 120) + '…' : hit.text;
      if (!(await ask(`Forget ${hit.kind} #${hit.id}?`, `“${shown}” will be deleted.${also}`, 'Forget'))) return;
      const done = await api('/api/forget', { method: 'POST', body: { kind: hit.kind, id: hit.id } });
      status.textContent = `Forgot ${hit.kind} #${hit.id}` + (done.also ? `; ${done.also}.` : '.');
      await refresh();
      status.textContent = `Forgot ${hit.kind} #${hit.id}` + (done.also ? `; ${done.also}.` : '.');
    } catch (error) {
      notify(error.message);
    }
  }

  function edit(item, hit) {
    if (item.querySelector('.edit')) return;
    const textarea = el('textarea', { 'aria-label': 'Memory text' });
    textarea.value = hit.text;
    const select = el('select', { 'aria-label': 'Memory kind' },
      ...kinds.map((name) => el('option', { value: name, text: name, selected: name === hit.memory_kind })));
    const form = el('form', { class: 'edit' }, textarea,
      el('div', { class: 'row' }, select,
        el('button', { type: 'submit', class: 'primary', text: 'Save' }),
        el('button', { type: 'button', text: 'Cancel', onclick: () => form.remove() })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        const { memory } = await api(`/api/memories/${hit.id}`, {
          method: 'POST', body: { text: textarea.value, kind: select.value } });
        item.replaceWith(hitItem(memory));
        status.textContent = memory.id === hit.id ? 'Nothing changed.' : `Saved as memory #${memory.id}.`;
      } catch (error) {
        notify(error.message);
      }
    });
    item.append(form);
    textarea.focus();
  }

  async function showSession(id) {
    try {
      const { turns } = await api(`/api/sessions/${id}`);
      $('memory-session-title').textContent = `Session #${id}`;
      $('memory-session-turns').replaceChildren(...turns.map((turn) => el('li', {},
        el('div', { class: 'meta' }, el('b', { text: turn.speaker || 'turn' }),
          el('time', { datetime: turn.date, text: shortDate(turn.date) }), el('span', { text: `#${turn.id}` })),
        el('p', { text: turn.text }))));
      results.hidden = true;
      sessionView.hidden = false;
      $('memory-session-back').focus();
    } catch (error) {
      notify(error.message);
    }
  }

  $('memory-session-back').addEventListener('click', () => {
    sessionView.hidden = true;
    results.hidden = false;
    query.focus();
  });
  $('memory-form').addEventListener('submit', (event) => { event.preventDefault(); refresh(); });
  query.addEventListener('input', schedule);
  for (const control of [kind, since, until, session]) control.addEventListener('change', refresh);

  return {
    show() {
      if (!started) { started = true; refresh(); }
    },
  };
}
