// The tour: eight steps through the page, a sentence each, the control it
// concerns highlighted, a button that sets up what the step shows, Next and
// Back; it ends at the examples of real use.
import { $ } from './state.js';
import { el } from './format.js';

/**
 * The steps: a title (the lesson's links name them), the control each
 * concerns (a selector), what to do there, and the button that sets up what
 * the step talks about (lessons.js does it), so that a student can follow
 * any step without the ones before it: a link to ?step=N opens it set up.
 * show: where the set-up's result is, scrolled to once it is done (else
 * the control).
 */
export const STEPS = [
  {
    title: 'Size a filter',
    target: '#n',
    text: 'Say how many keys you expect (n) and how often a wrong "yes" is acceptable (p): the page derives the bits m and the hashes k, and shows the arithmetic.',
    button: 'Make a filter for 100 keys at 1 %',
  },
  {
    title: 'Add a key',
    target: '#key',
    text: 'Type a word and press Add: its k bits light up in the grid, striped green where a bit was 0 and is now 1.',
    button: 'Make a filter and add "apple"',
  },
  {
    title: 'Test a key never added',
    target: '#test',
    text: 'Test a word you never added: one bit at 0 means "certainly not"; all of them at 1 means "probably".',
    button: 'Add apple, banana and cherry, then test "grape"',
    show: '#verdict',
  },
  {
    title: 'A false positive',
    target: '#findfp',
    text: 'Find a false positive: the page tries fresh words until one finds all its bits set, each by a different added key, and lists which key set each bit.',
    button: 'Make a 64-bit filter with 6 keys and find a false positive',
    show: '#verdict',
  },
  {
    title: 'How many hashes',
    target: '#tk',
    text: 'Move k: the false-positive rate falls, bottoms out at k* = (m / n) ln 2, where half the bits are set, and rises again; the dots are measured.',
    button: 'Make the 624-bit filter for 100 keys and measure every k',
  },
  {
    title: 'A whole pattern repeated',
    target: '#small-setup',
    text: 'The rarer false positive: a fresh key lands on exactly the bits of one added key. In a small filter with few keys it is most of them, and theory and measurement part.',
    button: 'Make the 125-bit filter with 3 keys and run the experiment',
  },
  {
    title: 'Removing, and its cost',
    target: 'input[name="kind"][value="counting"]',
    text: 'A counting filter can remove keys it holds. "Remove anyway" is offered only for a false positive (a key never added that the filter says "probably" to): removing it can take an added key\'s counter to 0.',
    button: 'Make a 40-counter filter with 6 keys and pick a false positive to remove',
    show: '#verdict',
  },
  {
    title: 'Where filters work for real',
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
// lessons.js sets up a step (setUp), main.js keeps the step in the address (onStep).
const hooks = { setUp: async () => {}, onStep: () => {} };

function target(i) {
  const t = document.querySelector(STEPS[i].target);
  // A radio's step highlights its label, the thing one sees.
  return t?.closest('label') ?? t;
}

/** showStep opens step i (from 0) of the tour; setUp true runs its set-up too, as a link to it does. */
export async function showStep(i, { setUp = false } = {}) {
  if (at >= 0) target(at)?.classList.remove('tour-target');
  $('tour').hidden = false;
  document.body.classList.add('touring');
  at = i;
  const step = STEPS[i];
  $('tour-step').textContent = `Step ${i + 1} of ${STEPS.length}: ${step.title}`;
  const parts = [el('p', { text: step.text })];
  if (step.links) {
    const ul = el('ul');
    for (const u of USES) ul.append(el('li', {}, el('a', { href: `/examples/${u.name}/README.md`, text: u.text })));
    parts.push(ul);
  }
  $('tour-text').replaceChildren(...parts);
  $('tour-do').hidden = !step.button;
  $('tour-do').textContent = step.button ?? 'Set up this step';
  $('tour-back').disabled = i === 0;
  $('tour-next').textContent = i === STEPS.length - 1 ? 'Finish' : 'Next';
  hooks.onStep(i + 1);
  if (setUp && step.button) await hooks.setUp(i + 1);
  const t = target(i);
  t?.classList.add('tour-target');
  // At once, near the top of the screen (scroll-margin-top in style.css), above the panel.
  (setUp && step.show ? document.querySelector(step.show) : t)?.scrollIntoView({ block: 'start' });
}

export function startTour() {
  showStep(0);
  $('tour-next').focus();
}

export function endTour() {
  if (at >= 0) target(at)?.classList.remove('tour-target');
  at = -1;
  $('tour').hidden = true;
  document.body.classList.remove('touring');
  hooks.onStep(0);
  $('tour-start').focus();
}

/** The step open, from 1, or 0 when the tour is closed. */
export const tourStep = () => at + 1;

export function wireTour({ setUp, onStep }) {
  Object.assign(hooks, { setUp, onStep });
  $('tour-start').addEventListener('click', startTour);
  $('tour-next').addEventListener('click', () => (at === STEPS.length - 1 ? endTour() : showStep(at + 1)));
  $('tour-back').addEventListener('click', () => at > 0 && showStep(at - 1));
  $('tour-close').addEventListener('click', endTour);
  // Folding leaves the step's title and its buttons: on a phone, the page shows above.
  $('tour-fold').addEventListener('click', () => {
    const folded = $('tour').classList.toggle('folded');
    document.body.classList.toggle('folded', folded);
    $('tour-fold').setAttribute('aria-expanded', String(!folded));
    $('tour-fold').textContent = folded ? 'Unfold' : 'Fold';
  });
  $('tour-do').addEventListener('click', async () => {
    const i = at;
    await hooks.setUp(i + 1);
    // What the set-up made, or the step's control, near the top of the screen.
    (STEPS[i].show ? document.querySelector(STEPS[i].show) : target(i))?.scrollIntoView({ block: 'start' });
  });
  $('tour').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') endTour();
  });
}
