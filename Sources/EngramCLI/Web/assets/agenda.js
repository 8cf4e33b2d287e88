// Agenda: reminders and events by day; cancel one, or move it to another time.
import { api, el, dayOf, notify, ask } from './api.js';

export function initAgenda() {
  const $ = (id) => document.getElementById(id);
  const from = $('agenda-from');
  const to = $('agenda-to');
  const status = $('agenda-status');
  const days = $('agenda-days');

  function localInput(iso) {
    const date = new Date(iso);
    const pad = (n) => String(n).padStart(2, '0');
    return `${dayOf(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  }

  function itemView(item) {
    const when = item.due ? new Date(item.due).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '';
    const view = el('div', { class: 'item', 'data-id': item.id },
      el('span', { class: 'when', text: when }),
      el('span', { class: 'badge', text: item.kind + (item.repeats ? ', repeats' : '') }), ' ',
      el('span', { text: item.title }),
      item.condition_note ? el('span', { class: 'meta condition', text: item.condition_note }) : null,
      item.delivered_at
        ? el('span', { class: 'meta', text: item.condition_outcome === 'failed' ? 'not fired' : 'delivered' })
        : null);
    const actions = el('div', { class: 'actions' },
      el('button', { type: 'button', text: 'Move', 'aria-label': `Move ${item.kind} ${item.id}`,
        onclick: () => move(view, item) }),
      el('button', { type: 'button', class: 'danger', text: 'Cancel', 'aria-label': `Cancel ${item.kind} ${item.id}`,
        onclick: () => cancel(item) }));
    view.append(actions);
    return view;
  }

  async function load() {
    const parameters = new URLSearchParams();
    if (from.value) parameters.set('from', from.value);
    if (to.value) parameters.set('to', to.value);
    try {
      const { items } = await api('/api/agenda?' + parameters);
      const groups = new Map();
      for (const item of items) {
        const day = dayOf(new Date(item.due));
        if (!groups.has(day)) groups.set(day, []);
        groups.get(day).push(item);
      }
      days.replaceChildren(...[...groups].map(([day, list]) => el('section', { class: 'day' },
        el('h3', { text: new Date(day + 'T12:00').toLocaleDateString([], {
          weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }) }),
        ...list.map(itemView))));
      status.textContent = items.length ? `${items.length} item${items.length === 1 ? '' : 's'}` : 'Nothing in this range.';
    } catch (error) {
      status.textContent = error.message;
    }
  }

  async function cancel(item) {
    if (!(await ask(`Cancel ${item.kind} #${item.id}?`, `“${item.title}” will be removed.`, 'Cancel it'))) return;
    try {
      await api(`/api/agenda/${item.id}/cancel`, { method: 'POST', body: {} });
      await load();
    } catch (error) {
      notify(error.message);
    }
  }

  function move(view, item) {
    if (view.querySelector('form')) return;
    const input = el('input', { type: 'datetime-local', 'aria-label': 'New time', value: localInput(item.due) });
    const form = el('form', { class: 'row' }, input,
      el('button', { type: 'submit', class: 'primary', text: 'Save' }),
      el('button', { type: 'button', text: 'Keep', onclick: () => form.remove() }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await api(`/api/agenda/${item.id}/move`, {
          method: 'POST', body: { due: new Date(input.value).toISOString() } });
        await load();
      } catch (error) {
        notify(error.message);
      }
    });
    view.append(form);
    input.focus();
  }

  $('agenda-form').addEventListener('submit', (event) => { event.preventDefault(); load(); });
  let started = false;
  return {
    show() {
      if (started) return;
      started = true;
      const today = new Date();
      from.value = dayOf(today);
      to.value = dayOf(new Date(today.getTime() + 30 * 86400000));
      load();
    },
  };
}
