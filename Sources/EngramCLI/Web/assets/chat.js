// Chat: the agent's conversation for this browser session, its phase, the reply as it
// streams in, Confirm/Cancel for a pending action, and due reminders as they come due.
import { api, stream, el, notify } from './api.js';

const reminderInterval = 15000;

export function initChat() {
  const log = document.getElementById('chat-log');
  const phase = document.getElementById('chat-phase');
  const form = document.getElementById('chat-form');
  const input = document.getElementById('chat-input');
  const send = document.getElementById('chat-send');
  const pending = document.getElementById('chat-pending');
  const pendingText = document.getElementById('chat-pending-text');
  const confirm = document.getElementById('chat-confirm');
  const cancel = document.getElementById('chat-cancel');
  let started = false;

  function add(kind, text) {
    const item = el('li', { class: kind, text });
    log.append(item);
    item.scrollIntoView({ block: 'nearest' });
    return item;
  }

  function busy(flag) {
    send.disabled = flag;
    confirm.disabled = flag;
    cancel.disabled = flag;
  }

  // Draws a state of the agent (the JSON of /api/chat and of the `done` event).
  function show(state, bubble) {
    pending.hidden = state.phase !== 'waiting';
    phase.textContent = state.label || '';
    if (state.phase === 'waiting') {
      pendingText.textContent = state.pending.text;
      if (bubble) bubble.remove();
      confirm.focus();
    } else if (state.phase === 'finished') {
      if (bubble) bubble.textContent = state.reply; else add('agent', state.reply);
    } else if (state.phase === 'failed' || state.phase === 'error') {
      if (bubble) bubble.remove();
      add('error', state.error);
    } else if (bubble && !bubble.textContent) {
      bubble.remove();
    }
  }

  async function run(path, body) {
    busy(true);
    const bubble = add('agent', '');
    bubble.setAttribute('aria-busy', 'true');
    try {
      await stream(path, body, (name, data) => {
        if (name === 'state') phase.textContent = data.label || '';
        else if (name === 'partial') bubble.textContent = data.text;
        else if (name === 'done') show(data, bubble);
      });
    } catch (error) {
      bubble.remove();
      add('error', error.message);
    } finally {
      bubble.removeAttribute('aria-busy');
      busy(false);
      if (pending.hidden) input.focus();
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    add('user', text);
    run('/api/chat/send', { text });
  });
  confirm.addEventListener('click', () => {
    pending.hidden = true;
    run('/api/chat/confirm', {});
  });
  cancel.addEventListener('click', async () => {
    busy(true);
    try {
      show(await api('/api/chat/cancel', { method: 'POST', body: {} }));
    } catch (error) {
      add('error', error.message);
    } finally {
      busy(false);
      input.focus();
    }
  });

  async function deliverReminders() {
    try {
      const { reminders } = await api('/api/reminders/due', { method: 'POST', body: {} });
      for (const reminder of reminders) add('reminder', '⏰ ' + reminder.line);
    } catch (error) {
      notify('Reminders: ' + error.message);
    }
  }

  return {
    async show() {
      if (started) return;
      started = true;
      try {
        show(await api('/api/chat'));
      } catch (error) {
        notify(error.message);
      }
      deliverReminders();
      setInterval(deliverReminders, reminderInterval);
      input.focus();
    },
  };
}
