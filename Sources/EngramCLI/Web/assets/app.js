// Engram's web app: five tabs over the JSON API; each tab loads when first shown.
import { initChat } from './chat.js';
import { initMemory } from './memory.js';
import { initAgenda } from './agenda.js';
import { initInsight } from './insight.js';
import { initRoute } from './route.js';

const tabs = [...document.querySelectorAll('[role=tab]')];
const loaders = {
  chat: initChat(), memory: initMemory(), agenda: initAgenda(), insight: initInsight(), route: initRoute(),
};

function select(tab, focus) {
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute('aria-selected', String(selected));
    other.tabIndex = selected ? 0 : -1;
    document.getElementById(other.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
  const name = tab.id.slice(4);
  if (location.hash !== '#' + name) history.replaceState(null, '', '#' + name);
  loaders[name].show();
}

for (const tab of tabs) {
  tab.addEventListener('click', () => select(tab, false));
  // Arrow keys, Home and End move between tabs (the WAI-ARIA tabs pattern).
  tab.addEventListener('keydown', (event) => {
    const index = tabs.indexOf(tab);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select(tabs[(next + tabs.length) % tabs.length], true);
  });
}

select(document.getElementById('tab-' + location.hash.slice(1)) || tabs[0], false);
