// The demo page (web-demo/), section 1 and the page as a whole, in headless
// Chromium: what it serves, the sizing form, a phone's viewport, the
// keyboard, and no error or request beyond 127.0.0.1.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { onCleanup } from '../testkit/process.js';
import { PHONE, browser, derived, openPage, page, server, setParams, shot, useDemo } from './demo-helpers.js';

useDemo();

describe('the page and its sizing form', () => {
  test('serves only the page and the module, with a CSP and explicit types', async () => {
    const get = (p) => fetch(new URL(p, server.url));
    const html = await get('/');
    assert.equal(html.status, 200);
    assert.match(html.headers.get('content-type'), /^text\/html/);
    assert.match(html.headers.get('content-security-policy'), /script-src 'self' 'wasm-unsafe-eval';/);
    assert.equal((await get('/js/edgebloom.wasm')).headers.get('content-type'), 'application/wasm');
    assert.match((await get('/js/index.js')).headers.get('content-type'), /^text\/javascript/);
    for (const p of [
      '/serve.js',
      '/js/test/',
      '/package.json',
      '/js/../package.json',
      '/%2e%2e/package.json',
      '/js/index.d.ts',
      '/nope.html',
    ]) {
      assert.equal((await get(p)).status, 404, p);
    }
    const html0 = await html.text();
    assert.doesNotMatch(html0, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline scripts');
    assert.doesNotMatch(html0, /\son[a-z]+=/, 'no inline event handlers');
    assert.doesNotMatch(
      html0 + (await (await get('/main.js')).text()) + (await (await get('/style.css')).text()),
      /https?:\/\/(?!www\.w3\.org\/2000\/svg)(?!127\.0\.0\.1)[a-z]/i,
    );
  });

  test('derives m and k from n and p, or takes them directly', async () => {
    await setParams({ n: '1000000', p: '0.0001' });
    assert.equal(await derived('Bits m'), '19,170,117 (19.17 M bits)');
    // What m bits take, and why the saved filter is longer: where both are shown.
    assert.match(await derived('In memory'), /^2\.28\d MiB: 19,170,117 bits, in whole 64-bit words$/);
    assert.match(await derived('Saved size'), /^2\.28\d MiB: those, a 64-byte header and an 8-byte checksum$/);
    assert.equal(await derived('Hashes k'), '13');
    assert.equal(await derived('Bits per key'), '19.17');
    await setParams({ sizing: 'mk', n: 1000, m: 20000, k: 10 });
    assert.equal(await derived('Bits per key'), '20.00');
    // Rates in one format, a percentage, however small.
    assert.match(await derived('False-positive rate'), /^0\.00889 % /);
    await shot('params-desktop');
  });

  test('bad parameters get a message next to the field, and the page keeps working', async () => {
    await setParams({ n: 20, p: '0' });
    assert.match(await page.textContent('#p-err'), /more than 0 and less than 1/);
    await page.fill('#p', '1');
    assert.match(await page.textContent('#p-err'), /more than 0 and less than 1/);
    await page.fill('#p', '1.5');
    assert.match(await page.textContent('#p-err'), /more than 0 and less than 1/);
    assert.equal(await page.getAttribute('#p', 'aria-invalid'), 'true');
    await page.fill('#n', '0');
    assert.match(await page.textContent('#n-err'), /at least 1/);
    await page.click('#create');
    assert.match(await page.textContent('#n-err'), /at least 1/);
    await shot('bad-params-desktop');
    await setParams({ sizing: 'mk', m: 100, k: 0 });
    assert.match(await page.textContent('#k-err'), /1 to 64/);
    await setParams({ sizing: 'np', n: 20, p: '5%' });
    assert.equal(await page.textContent('#n-err'), '');
    assert.equal(await page.textContent('#p-err'), '');
    assert.equal(await page.getAttribute('#p', 'aria-invalid'), null);
  });

  test('phone-sized viewport: readable, no sideways scrolling', async () => {
    const phone = await browser.context.newPage();
    onCleanup(() => phone.close());
    await phone.setViewportSize(PHONE);
    await openPage('', phone);
    const fits = () => phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    assert.ok(await fits(), 'no horizontal scroll at 375px');
    await shot('start-phone', phone);
    for (const key of ['apple', 'pear', 'kiwi']) {
      await phone.fill('#key', key);
      await phone.press('#key', 'Enter');
    }
    // With three keys Find offers keys first (an ordinary false positive
    // needs more bits set), then finds one.
    await phone.click('#findfp');
    await phone.waitForSelector('#findfp-more');
    assert.ok(await fits(), 'no horizontal scroll with the offer');
    await shot('findfp-offer-phone', phone);
    await phone.click('#findfp-more');
    await phone.waitForFunction(() =>
      /Found after|No false positive/.test(document.querySelector('#verdict').textContent),
    );
    await phone.waitForTimeout(700);
    assert.ok(await fits(), 'no horizontal scroll with a verdict');
    await shot('false-positive-phone', phone);
    await phone.click('#bulksize');
    await phone.click('#bulk');
    await phone.waitForFunction(() => document.querySelector('#bulk-status').textContent.startsWith('Done'), null, {
      timeout: 30_000,
    });
    assert.ok(await fits(), 'no horizontal scroll with the charts');
    await shot('bulk-phone', phone);
    await phone.check('input[name="kind"][value="blocked"]');
    await phone.click('#create');
    await phone.fill('#key', 'apple');
    await phone.press('#key', 'Enter');
    await phone.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Added "apple"'));
    assert.equal(await phone.$$eval('#grid .c', (c) => c.length), 256);
    assert.ok(await fits(), 'no horizontal scroll with a split-block block');
    await phone.waitForTimeout(700);
    await shot('blocked-phone', phone);
  });

  test('keyboard: every control is reachable with Tab', async () => {
    await openPage();
    const reached = new Set();
    for (let i = 0; i < 90; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate(
          () => document.activeElement.id || document.activeElement.name || document.activeElement.className,
        ),
      );
    }
    for (const id of ['n', 'p', 'create', 'key', 'add', 'test', 'findfp', 'bulk', 'download', 'file'])
      assert.ok(reached.has(id), `Tab reaches #${id}`);
    // Adding by keyboard alone.
    await page.focus('#key');
    await page.keyboard.type('typed');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Added "typed"'));
  });

  test('no console errors, and no request left 127.0.0.1', () => {
    browser.assertClean();
    const hosts = new Set(
      browser.requests
        .map((u) => new URL(u))
        .filter((u) => u.protocol.startsWith('http'))
        .map((u) => u.host),
    );
    assert.deepEqual([...hosts], [new URL(server.url).host]);
  });
});
