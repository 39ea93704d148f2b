// examples/browser-page: the packed package installed into a copy of the
// example, served by its own serve.js (npm start), driven in headless
// Chromium as a user would: type URLs, press the button, read the answers.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { cleanup, startServer, timeout } from '../../testkit/process.js';
import { launchChromium } from '../../testkit/browser.js';
import { installExample } from './helpers.js';

after(cleanup);

test('the page dedups URLs with the installed package, loaded without a bundler', { timeout }, async () => {
  const dir = await installExample('browser-page');
  const { url } = await startServer(process.execPath, ['serve.js'], { cwd: dir, env: { PORT: '0' } });
  const browser = await launchChromium();
  const page = await browser.context.newPage();
  const wasm = page.waitForResponse((res) => res.url().endsWith('/edgebloom/edgebloom.wasm'));
  await page.goto(url);
  assert.equal((await wasm).headers()['content-type'], 'application/wasm');
  await page.waitForSelector('body[data-ready="true"]');

  const submit = async (lines) => {
    const before = await page.locator('#results li').count();
    await page.fill('#urls', lines.join('\n'));
    await page.click('#check');
    await page.waitForFunction((n) => document.querySelectorAll('#results li').length === n, before + lines.length);
    return page.locator('#results li').evaluateAll((lis, from) => lis.slice(from).map((li) => li.className), before);
  };
  assert.deepEqual(
    await submit([
      'https://example.com/a',
      'https://example.com/b',
      'HTTPS://EXAMPLE.com:443/a#top', // the first one, spelled otherwise
      'not a url',
    ]),
    ['new', 'new', 'seen', 'error'],
  );
  assert.deepEqual(await submit(['https://example.com/b', 'https://example.com/c?utm_source=x']), ['seen', 'new']);
  assert.match(await page.textContent('#stats'), /^3 URLs in \d+ bytes/);
  browser.assertClean();
});
