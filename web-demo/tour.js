// The tour: eight steps through the page, a sentence each, the control it
// concerns highlighted, Next and Back; it ends at the examples of real use.
import { $ } from './state.js';
import { el } from './format.js';

/** The steps: the control each concerns (a selector) and what to do there. */
export const STEPS = [
  {
    target: '#n',
    text: 'Say how many keys you expect (n) and how often a wrong "yes" is acceptable (p): the page derives the bits m and the hashes k, and shows the arithmetic.',
  },
  {
    target: '#key',
    text: 'Type a word and press Add: its k bits light up in the grid, green where a bit was 0 and is now 1.',
  },
  {
    target: '#test',
    text: 'Test a word you never added: one bit at 0 means "certainly not"; all of them at 1 means "probably", and the page says which keys set them.',
  },
  {
    target: '#findfp',
    text: 'Find a false positive: the page tries fresh words until one finds all its bits set by other keys.',
  },
  {
    target: '#tk',
    text: 'Move k: the false-positive rate falls, bottoms out at k* = (m / n) ln 2, where half the bits are set, and rises again; the dots are measured.',
  },
  {
    target: '#small-setup',
    text: 'In a small filter theory and measurement part: a fresh key can land on exactly the bits of one added key. Make the 125-bit filter, then run the experiment.',
  },
  {
    target: 'input[name="kind"][value="counting"]',
    text: 'A counting filter can remove keys. Make one, add a few words, then remove one you never added: "Remove anyway" shows the added key it breaks.',
  },
  {
    target: '#uses',
    text: 'Where filters like this one work for real:',
    links: true,
  },
];

/** The examples of real use, each a folder of examples/ with its README. */
export const USES = [
  { name: 'colly-crawler', text: "A crawler's seen-set: a Colly crawler that fetches each page once" },
  { name: 'sync-extension', text: "An extension's blocklist, synced from the edge Worker" },
  { name: 'parquet', text: 'Parquet pruning: a filter per row group, and a reader that skips' },
];

let at = -1;

function target(i) {
  const t = document.querySelector(STEPS[i].target);
  // A radio's step highlights its label, the thing one sees.
  return t?.closest('label') ?? t;
}

function go(i) {
  if (at >= 0) target(at)?.classList.remove('tour-target');
  at = i;
  const step = STEPS[i];
  const t = target(i);
  t?.classList.add('tour-target');
  // At once, near the top of the screen (scroll-margin-top in style.css), above the panel.
  t?.scrollIntoView({ block: 'start' });
  $('tour-step').textContent = `Step ${i + 1} of ${STEPS.length}`;
  const parts = [step.text];
  if (step.links) {
    const ul = el('ul');
    for (const u of USES) ul.append(el('li', {}, el('a', { href: `/examples/${u.name}/README.md`, text: u.text })));
    parts.push(ul);
  }
  $('tour-text').replaceChildren(...parts);
  $('tour-back').disabled = i === 0;
  $('tour-next').textContent = i === STEPS.length - 1 ? 'Finish' : 'Next';
}

export function startTour() {
  $('tour').hidden = false;
  document.body.classList.add('touring');
  go(0);
  $('tour-next').focus();
}

export function endTour() {
  if (at >= 0) target(at)?.classList.remove('tour-target');
  at = -1;
  $('tour').hidden = true;
  document.body.classList.remove('touring');
  $('tour-start').focus();
}

export function wireTour() {
  $('tour-start').addEventListener('click', startTour);
  $('tour-next').addEventListener('click', () => (at === STEPS.length - 1 ? endTour() : go(at + 1)));
  $('tour-back').addEventListener('click', () => at > 0 && go(at - 1));
  $('tour-close').addEventListener('click', endTour);
  $('tour').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') endTour();
  });
}
