// Route inspector: where a request would go and why (`engram route --json`), without running it.
import { api, el } from './api.js';

function row(name, value) {
  return el('tr', {}, el('th', { scope: 'row', text: name }), el('td', { text: value }));
}

// A bar as wide as `fraction` of its cell (set through the CSSOM: the page's policy forbids
// inline style attributes).
function bar(fraction) {
  const span = el('span', { class: 'bar' });
  span.style.width = `${Math.round(fraction * 100)}%`;
  return span;
}

export function initRoute() {
  const form = document.getElementById('route-form');
  const input = document.getElementById('route-input');
  const result = document.getElementById('route-result');

  async function inspect() {
    const text = input.value.trim();
    if (!text) return;
    try {
      const route = await api('/api/route?' + new URLSearchParams({ text }));
      const parts = [el('table', { class: 'route-summary' }, el('tbody', {},
        row('skill', route.skill || 'none (answered from memory or small talk)'),
        row('method', route.method), row('confidence', route.confidence.toFixed(2))))];
      if (route.intent && route.intent.length) {
        parts.push(el('h2', { text: 'Intent model: top labels' }), el('table', {},
          el('thead', {}, el('tr', {}, el('th', { text: 'label' }), el('th', { class: 'num', text: 'probability' }),
            el('th', { text: '' }))),
          el('tbody', {}, ...route.intent.map((label) => el('tr', {}, el('td', { text: label.label }),
            el('td', { class: 'num', text: label.probability.toFixed(3) }),
            el('td', {}, bar(label.probability)))))));
      }
      const names = Object.keys(route.arguments).sort();
      parts.push(el('h2', { text: 'Arguments read' }), names.length
        ? el('table', {}, el('tbody', {}, ...names.map((name) => row(name, String(route.arguments[name])))))
        : el('p', { class: 'status', text: 'None.' }));
      if (route.problems.length) {
        parts.push(el('h2', { text: 'Problems' }), el('ul', {}, ...route.problems.map((p) => el('li', { text: p }))));
      }
      result.replaceChildren(...parts);
    } catch (error) {
      result.replaceChildren(el('p', { class: 'status', text: error.message }));
    }
  }

  form.addEventListener('submit', (event) => { event.preventDefault(); inspect(); });
  return { show() {} };
}
