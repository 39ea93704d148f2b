// The demo in the room: the tour, the page named and announced for a screen
// reader, contrast, a phone at 390 px, and no console error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as eb from 'edgebloom';
import { onCleanup } from '../testkit/process.js';
import {
  browser,
  button,
  contrastFailures,
  contrastRatio,
  keyField,
  openPage,
  page,
  server,
  shot,
  unnamed,
  useDemo,
} from './demo-helpers.js';

useDemo();

describe('the lesson in the room', () => {
  test('the tour: 8 steps, a sentence each, the control highlighted, next and back, ending at real uses', async () => {
    await openPage();
    await button('Take the tour (8 steps)').click();
    const tour = page.getByRole('dialog', { name: /Step 1 of 8/ });
    await tour.waitFor();
    const seen = [];
    for (let i = 1; i <= 8; i++) {
      assert.match(await page.textContent('#tour-step'), new RegExp(`^Step ${i} of 8: `));
      const text = await page.textContent('#tour-text');
      assert.ok(text.length > 20, `step ${i} says something`);
      const lit = await page.$$eval('.tour-target', (ts) => ts.map((t) => t.id || t.textContent.trim().slice(0, 30)));
      assert.equal(lit.length, 1, `step ${i} highlights one control: ${lit}`);
      seen.push(lit[0]);
      if (i === 2) {
        await button('Back').click();
        assert.match(await page.textContent('#tour-step'), /^Step 1 of 8: /);
        await button('Next').click();
        // The step's button sets up what it talks about.
        await button('Make a filter and add "apple"').click();
        await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Added "apple"'));
        assert.equal(await page.inputValue('#key'), 'apple');
      }
      if (i === 5) await shot('tour-step5-desktop', page);
      if (i < 8) await button('Next').click();
    }
    assert.equal(new Set(seen).size, 8, `eight controls: ${seen}`);
    assert.equal(seen[7], 'uses');
    // The last step links the examples of real use, and they are served.
    const links = await page.$$eval('#tour-text a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    assert.deepEqual(
      links.map(([, href]) => href),
      ['/examples/colly-crawler/README.md', '/examples/sync-extension/README.md', '/examples/parquet/README.md'],
    );
    assert.match(links[0][0], /crawler's seen-set/);
    assert.match(links[1][0], /extension's blocklist, synced from the edge Worker/);
    assert.match(links[2][0], /Parquet pruning/);
    for (const [, href] of links) {
      const res = await fetch(new URL(href, server.url));
      assert.equal(res.status, 200, href);
      assert.match(await res.text(), /^# /);
    }
    assert.equal((await fetch(new URL('/examples/test/helpers.js', server.url))).status, 404);
    assert.equal((await fetch(new URL('/examples/worker-blocklist/src/index.js', server.url))).status, 404);
    await shot('tour-end-desktop', page);
    await button('Finish').click();
    assert.equal(await page.isVisible('#tour'), false);
    assert.equal(await page.$$eval('.tour-target', (ts) => ts.length), 0);
  });

  test('rings: focus, tour and probed cells at 3:1 or more against the page and against every cell state', async () => {
    await openPage('?n=6&m=64&k=3&key=apple&key=banana&key=cherry');
    await page.fill('#key', 'pear');
    await button('Test').click();
    await button('Take the tour (8 steps)').click();
    // A ring as the keyboard shows it (:focus-visible): on the control Tab reaches.
    await page.keyboard.press('Tab');
    const { behind, rings } = await page.evaluate(() => {
      const colours = (shadow) => shadow.match(/rgba?\([^)]+\)/g) ?? [];
      const grid = document.querySelector('#grid');
      const cells = ['', 'set', 'new', 'old', 'probe', 'zero', 'dec'].map((st) => {
        const c = document.createElement('span');
        c.className = `c ${st}`;
        grid.append(c);
        return c;
      });
      const ring = (e) => [getComputedStyle(e).outlineColor, ...colours(getComputedStyle(e).boxShadow)];
      const out = {
        behind: [
          getComputedStyle(document.body).backgroundColor,
          ...cells.map((c) => getComputedStyle(c).backgroundColor),
        ],
        rings: {
          focus: ring(document.activeElement),
          tour: ring(document.querySelector('.tour-target')),
          probe: colours(getComputedStyle(cells[4]).boxShadow),
          zero: colours(getComputedStyle(cells[5]).boxShadow),
        },
      };
      for (const c of cells) c.remove();
      return out;
    });
    const found = {};
    for (const [name, ring] of Object.entries(rings)) {
      // Against each colour behind or beside it, some band of the ring stands out.
      found[name] = {
        ring,
        outer: contrastRatio(ring[0], behind[0]),
        worst: Math.min(...behind.map((bg) => Math.max(...ring.map((c) => contrastRatio(c, bg))))),
      };
    }
    for (const [name, r] of Object.entries(found)) {
      assert.ok(r.worst >= 3, `${name} ring ${r.ring.join(' ')}: ${r.worst.toFixed(2)}:1 against some cell`);
    }
    // The outer band of the focus and tour rings against the page itself.
    assert.ok(found.focus.outer >= 3, `focus ring against the page ${found.focus.outer.toFixed(2)}:1`);
    assert.ok(found.tour.outer >= 3, `tour ring against the page ${found.tour.outer.toFixed(2)}:1`);
    await button('Close the tour').click();
  });

  test('cell states are told apart by more than hue: a pattern, an edge or a ring, or 3:1 in lightness', async () => {
    const states = await page.evaluate(() =>
      ['', 'set', 'new', 'old', 'probe', 'zero', 'dec', 'dec lost'].map((st) => {
        const c = document.createElement('span');
        c.className = `c ${st}`;
        document.querySelector('#grid').append(c);
        const cs = getComputedStyle(c);
        const shape = `${cs.backgroundImage} ${cs.boxShadow}`.replace(/rgba?\([^)]+\)/g, 'C');
        const r = { state: st || 'off', bg: cs.backgroundColor, shape };
        c.remove();
        return r;
      }),
    );
    const looks = [];
    for (const [i, a] of states.entries())
      for (const b of states.slice(i + 1))
        if (a.shape === b.shape && contrastRatio(a.bg, b.bg) < 3) looks.push(`${a.state} ~ ${b.state}`);
    assert.deepEqual(looks, [], 'pairs of states that differ by hue alone');
  });

  test('at 1280 px the text of the charts, the legend and the captions is 16 px or more', async () => {
    await page.locator('#tradeoff-h').scrollIntoViewIfNeeded();
    await page.waitForSelector('#chart-k text');
    const small = await page.evaluate(() => {
      const out = [];
      for (const svg of document.querySelectorAll('svg.chart')) {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        for (const t of svg.querySelectorAll('text')) {
          const px = parseFloat(getComputedStyle(t).fontSize) * scale;
          if (px < 15.9) out.push(`${svg.id} "${t.textContent}": ${px.toFixed(1)} px`);
        }
      }
      for (const e of document.querySelectorAll('.legend li, figcaption, .caption, .help, .blabel')) {
        const px = parseFloat(getComputedStyle(e).fontSize);
        if (px < 16 && e.checkVisibility())
          out.push(`${e.className || e.tagName} "${e.textContent.trim().slice(0, 30)}": ${px} px`);
      }
      return out;
    });
    assert.deepEqual(small, []);
  });

  test('on a phone (390 × 844) the verdict of a test is above the grid, and both are in view', async () => {
    const phone = await browser.context.newPage();
    onCleanup(() => phone.close());
    await phone.setViewportSize({ width: 390, height: 844 });
    await openPage('?key=apple&key=banana&key=cherry', phone);
    await phone.fill('#key', 'grape');
    await phone.click('#test');
    await phone.waitForFunction(() => document.querySelector('#verdict').textContent.includes('"grape":'));
    const [v, g, h] = await phone.evaluate(() => [
      document.querySelector('#verdict').getBoundingClientRect().toJSON(),
      document.querySelector('#grid').getBoundingClientRect().toJSON(),
      window.innerHeight,
    ]);
    assert.ok(v.top >= -1 && v.bottom <= g.top, `verdict ${v.top}-${v.bottom} above the grid at ${g.top}`);
    assert.ok(g.bottom <= h, `the grid ends at ${g.bottom}, in the ${h} px of the screen`);
    // The tour's panel folds to its step and buttons, and the page shows above it.
    await phone.getByRole('button', { name: 'Take the tour (8 steps)' }).click();
    const tall = await phone.$eval('#tour', (t) => t.getBoundingClientRect().height);
    await phone.getByRole('button', { name: 'Fold' }).click();
    const folded = await phone.$eval('#tour', (t) => t.getBoundingClientRect().height);
    assert.ok(folded < tall / 2, `folded ${folded} px, unfolded ${tall} px`);
    assert.equal(await phone.getAttribute('#tour-fold', 'aria-expanded'), 'false');
    assert.equal(await phone.isVisible('#tour-text'), false);
    await phone.getByRole('button', { name: 'Next' }).click();
    assert.match(await phone.textContent('#tour-step'), /^Step 2 of 8/);
    await phone.getByRole('button', { name: 'Unfold' }).click();
    assert.equal(await phone.isVisible('#tour-text'), true);
    // Unfolded, the panel leaves the verdict and the grid in view above it,
    // and the step's text in the screen: a test's answer and the step, together.
    await phone.fill('#key', 'grape');
    await phone.$eval('#verdict', (v) => v.replaceChildren());
    await phone.click('#test');
    await phone.waitForFunction(() => document.querySelector('#verdict').textContent.includes('"grape":'));
    const [v2, g2, panel, text, h2] = await phone.evaluate(() =>
      ['#verdict', '#grid', '#tour', '#tour-text']
        .map((s) => document.querySelector(s).getBoundingClientRect().toJSON())
        .concat(window.innerHeight),
    );
    await shot('tour-unfolded-phone', phone);
    assert.ok(v2.top >= -1 && v2.bottom <= panel.top, `verdict ${v2.top}-${v2.bottom}, panel from ${panel.top}`);
    assert.ok(g2.bottom <= panel.top + 1, `the grid ends at ${g2.bottom}, the panel starts at ${panel.top}`);
    assert.ok(text.top >= panel.top && text.bottom <= h2, `step text ${text.top}-${text.bottom} in the ${h2} px`);
  });

  test('accessible: every control named, results announced, AA contrast in every state, keyboard alone works', async () => {
    await openPage();
    assert.deepEqual(await unnamed(page), []);
    for (const id of ['verdict', 'k-result', 'now-rate', 'patterns-result', 'bulk-status', 'tour-text'])
      assert.equal(await page.getAttribute(`#${id}`, 'aria-live'), 'polite', `#${id} is announced`);
    assert.equal(await page.getAttribute('#status', 'role'), 'status');
    assert.deepEqual(await contrastFailures(page), [], 'at load');
    // By keyboard alone: add, test, open the arithmetic, number the bits, move k.
    await keyField().focus();
    await page.keyboard.type('apple');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Added "apple"'));
    await page.keyboard.press('Tab'); // Add
    await page.keyboard.press('Tab'); // Test
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('"apple": probably'));
    await page.focus('#hashmath-sum');
    await page.keyboard.press('Enter');
    assert.equal(await page.$eval('#hashmath-box', (d) => d.open), true, 'the arithmetic opens from the keyboard');
    await page.focus('#numbers');
    await page.keyboard.press('Space');
    assert.equal(await page.$eval('#grid', (g) => g.classList.contains('numbered')), true);
    assert.deepEqual(await contrastFailures(page), [], 'with numbers and a verdict');
    // Both choices kept across a reload.
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: 20_000 });
    assert.equal(await page.isChecked('#numbers'), true);
    assert.equal(await page.$eval('#hashmath-box', (d) => d.open), true);
    await page.uncheck('#numbers');
    await keyField().fill('pear');
    await button('Test').click();
    await page.click('#hashmath-sum');
    assert.equal(await page.$eval('#hashmath-box', (d) => d.open), false);
    // Undo takes focus once there is something to undo.
    await keyField().fill('plum');
    await button('Add').click();
    const reached = new Set();
    await page.focus('#tour-start');
    for (let i = 0; i < 90; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate(() => document.activeElement.id || document.activeElement.textContent.trim().slice(0, 20)),
      );
    }
    for (const id of [
      'n',
      'create',
      'key',
      'add',
      'test',
      'findfp',
      'undo',
      'reset',
      'numbers',
      'tk',
      'tn',
      'measure-all',
      'bulk',
      'small-setup',
      'patterns-run',
      'download',
      'file',
    ])
      assert.ok(reached.has(id), `Tab reaches #${id}`);
    assert.deepEqual(await unnamed(page), []);
  });

  test('at 390 px every state of the lesson fits, with no sideways scrolling, and reads at AA contrast', async () => {
    const phone = await browser.context.newPage();
    onCleanup(() => phone.close());
    await phone.setViewportSize({ width: 390, height: 844 });
    await openPage('', phone);
    const fits = async (state) => {
      assert.ok(
        await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        `no sideways scrolling: ${state}`,
      );
      assert.deepEqual(await contrastFailures(phone), [], `contrast: ${state}`);
      await shot(`${state}-phone`, phone);
    };
    await fits('lesson-start');
    await phone.locator('#tradeoff-h').scrollIntoViewIfNeeded();
    await phone.waitForSelector('#k-result[data-state="measured"]', { timeout: 30_000 });
    await phone.getByRole('slider', { name: 'Hashes k' }).focus();
    await phone.keyboard.press('ArrowRight');
    await phone.waitForSelector('#k-result[data-state="measured"][data-k="5"]', { timeout: 30_000 });
    await fits('tradeoff');
    await phone.getByRole('button', { name: 'Make a 125-bit filter with 3 keys' }).click();
    await phone.getByRole('button', { name: 'Run the experiment on this filter' }).click();
    await phone.waitForSelector('#patterns-result[data-state="done"]', { timeout: 120_000 });
    await fits('patterns');
    await phone.check('input[name="kind"][value="counting"]');
    await phone.check('input[name="sizing"][value="mk"]');
    await phone.fill('#m', '40');
    await phone.fill('#k', '3');
    await phone.click('#create');
    for (const key of ['red', 'green', 'blue', 'cyan']) {
      await phone.fill('#key', key);
      await phone.click('#add');
    }
    const c = new eb.CountingBloomFilter({ bits: 40, hashes: 3 });
    onCleanup(() => c.free());
    for (const key of ['red', 'green', 'blue', 'cyan']) c.add(key);
    let fp;
    for (let i = 0; !fp; i++) if (c.has(`never-${i}`)) fp = `never-${i}`;
    await phone.fill('#key', fp);
    await phone.click('#remove');
    await phone.click('#remove-anyway');
    await fits('remove-confirm');
    await phone.click('#confirm-remove');
    await phone.waitForFunction(() => document.querySelector('#verdict').textContent.includes('anyway'));
    await fits('removed-anyway');
    await phone.check('#numbers');
    await fits('numbered');
    await phone.getByRole('button', { name: 'Take the tour (8 steps)' }).click();
    for (let i = 1; i <= 8; i++) {
      // The highlighted control is on screen, above the tour's panel.
      const [target, panel] = await phone.evaluate(() => [
        document.querySelector('.tour-target').getBoundingClientRect().top,
        document.querySelector('#tour').getBoundingClientRect().top,
      ]);
      assert.ok(target >= 0 && target < panel, `step ${i}: control at ${target}, panel at ${panel}`);
      if (i === 5 || i === 8) await fits(`tour-step${i}`);
      if (i < 8) await phone.getByRole('button', { name: 'Next' }).click();
    }
  });

  test('no console errors in the lesson', () => {
    browser.assertClean();
  });
});
