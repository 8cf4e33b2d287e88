// Insight: counts by kind and size on disk, turns and memories per week (an SVG chart drawn
// here, no library), the last compaction and what a compaction would do now (its dry run).
import { api, el, shortDate } from './api.js';

const svgNS = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const node = document.createElementNS(svgNS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function bytes(count) {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return `${unit ? value.toFixed(1) : value} ${units[unit]}`;
}

function chart(weeks) {
  if (!weeks.length) return el('p', { class: 'status', text: 'Nothing stored yet.' });
  const width = 640;
  const height = 200;
  const left = 36;
  const bottom = 22;
  const top = 8;
  const max = Math.max(1, ...weeks.map((w) => Math.max(w.turns, w.memories)));
  const slot = Math.min(48, (width - left - 4) / weeks.length);
  const bar = Math.max(1, slot / 2 - 1);
  const scale = (n) => ((height - bottom - top) * n) / max;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `Turns and memories per week, ${weeks.length} weeks, at most ${max} in a week` });
  root.append(svg('text', { x: 2, y: top + 8 }, String(max)), svg('text', { x: 2, y: height - bottom }, '0'));
  weeks.forEach((week, index) => {
    const x = left + index * slot;
    const title = `week of ${week.week}: ${week.turns} turns, ${week.memories} memories`;
    const turns = svg('rect', { class: 'turns-bar', x, y: height - bottom - scale(week.turns), width: bar,
      height: scale(week.turns) });
    turns.append(svg('title', {}, title));
    const memories = svg('rect', { class: 'memories-bar', x: x + bar + 1, y: height - bottom - scale(week.memories),
      width: bar, height: scale(week.memories) });
    memories.append(svg('title', {}, title));
    root.append(turns, memories);
  });
  const labels = [0, Math.floor((weeks.length - 1) / 2), weeks.length - 1];
  for (const index of new Set(labels)) {
    root.append(svg('text', { x: left + index * slot, y: height - 6 }, weeks[index].week));
  }
  return el('div', {}, root, el('p', { class: 'legend' }, el('i', { class: 't' }), 'turns',
    el('i', { class: 'm' }), 'memories'));
}

function table(headers, rows) {
  return el('table', {},
    el('thead', {}, el('tr', {}, ...headers.map((h, i) => el('th', { class: i ? 'num' : '', text: h })))),
    el('tbody', {}, ...rows.map((row) => el('tr', {},
      ...row.map((cell, i) => el('td', { class: i ? 'num' : '', text: String(cell) }))))));
}

export function initInsight() {
  const $ = (id) => document.getElementById(id);
  const cards = $('insight-cards');
  const timeline = $('insight-timeline');
  const compaction = $('insight-compaction');

  async function load() {
    try {
      const { stats, timeline: weeks } = await api('/api/insight');
      const card = (value, label) => el('div', { class: 'card' }, el('b', { text: value }), el('span', { text: label }));
      cards.replaceChildren(
        card(bytes(stats.bytes), 'on disk'), card(stats.messages, 'turns'), card(stats.memories, 'memories'),
        card(stats.summaries, 'summaries'), card(stats.sessions, 'sessions'),
        ...Object.entries(stats.memories_by_kind).filter(([, n]) => n > 0).map(([kind, n]) => card(n, kind)),
        card(stats.index_tier, `index (${stats.index_rows} rows)`));
      timeline.replaceChildren(chart(weeks));
      $('insight-compaction-last').textContent = stats.last_compaction
        ? `Last compaction: ${shortDate(stats.last_compaction)}.` : 'Never compacted.';
    } catch (error) {
      cards.replaceChildren(el('p', { class: 'status', text: error.message }));
    }
  }

  $('insight-compaction-run').addEventListener('click', async () => {
    compaction.replaceChildren(el('p', { class: 'status', text: 'Planning…' }));
    try {
      const report = await api('/api/compaction');
      const tables = Object.keys(report.rows_before).sort();
      compaction.replaceChildren(
        el('p', { text: `Would summarize ${report.sessions_summarized} sessions, delete ${report.turns_deleted} turns, `
          + `quantize ${report.embeddings_quantized} vectors and merge ${report.memories_merged} memories.` }),
        el('ul', {}, ...report.plan.map((line) => el('li', { text: line }))),
        table(['table', 'now', 'after'], tables.map((name) => [name, report.rows_before[name], report.rows_after[name]])));
    } catch (error) {
      compaction.replaceChildren(el('p', { class: 'status', text: error.message }));
    }
  });

  return { show: load };
}
