// What the demo's browser tests (e2e/demo-*.test.js, one file a lesson step)
// share: the page served by web-demo/serve.js as `npm start` runs it (a
// process of its own) in headless Chromium, and ways to drive it and read it.
// useDemo() starts both for the test file that calls it; server, browser and
// page are live bindings, set by its before hook.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import * as eb from 'edgebloom';
import { cleanup, repoRoot, startServer, tempDir } from '../testkit/process.js';
import { launchChromium } from '../testkit/browser.js';
import { vectorsPath } from './helpers.js';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 740 };

// Screenshots of every state, to look at: in DEMO_SHOTS when it is set,
// else in a temp dir removed at the end.
let artifacts;
export let server;
export let browser;
export let page;

/** useDemo starts the demo's server and a browser with one page at 1280 × 800 for the tests of this file, and stops them after. */
export function useDemo() {
  before(async () => {
    await eb.init();
    artifacts = process.env.DEMO_SHOTS || (await tempDir('demo-shots'));
    await mkdir(artifacts, { recursive: true });
    server = await startServer(process.execPath, [path.join(repoRoot, 'web-demo/serve.js')], { env: { PORT: '0' } });
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.setViewportSize(DESKTOP);
    await openPage();
  });
  after(async () => {
    await cleanup();
  });
}

/** openPage loads the page afresh (at query, e.g. '?kind=counting&m=40&k=3'), and waits for its engine. */
export async function openPage(query = '', p = page) {
  // In front: Chromium holds back the timers of a page behind another.
  await p.bringToFront();
  await p.goto(new URL(query, server.url).href);
  await p.waitForSelector('body[data-ready]', { timeout: 20_000 });
}

export async function shot(name, p = page) {
  await p.screenshot({ path: path.join(artifacts, `demo-${name}.png`), fullPage: true });
}

// The cells a key lights up after an add or a test, by class.
export async function marked(selector) {
  return page.$$eval(`#grid ${selector}`, (cells) => cells.map((c) => Number(c.dataset.i)).sort((a, b) => a - b));
}

export const sorted = (xs) => [...new Set(xs)].sort((a, b) => a - b);

export async function setParams({ kind = 'classic', sizing = 'np', n, p, m, k }) {
  await page.check(`input[name="kind"][value="${kind}"]`);
  await page.check(`input[name="sizing"][value="${sizing}"]`);
  if (n !== undefined) await page.fill('#n', String(n));
  if (p !== undefined) await page.fill('#p', String(p));
  if (m !== undefined) await page.fill('#m', String(m));
  if (k !== undefined) await page.fill('#k', String(k));
}

export async function derived(name) {
  return page.textContent(`#derived dd[data-name^="${name}"]`);
}

// addKey adds key through the page (its Add button) and returns the
// verdict's heading: 'Added "key".', or a duplicate's or a false positive's.
export async function addKey(key) {
  await page.fill('#key', key);
  await page.$eval('#verdict', (v) => v.replaceChildren());
  await page.click('#add');
  await page.waitForFunction(
    (k) => document.querySelector('#verdict .verdict-head')?.textContent.includes(`"${k}"`),
    key,
  );
  return page.textContent('#verdict .verdict-head');
}

export async function testKey(key) {
  await page.fill('#key', key);
  await page.click('#test');
  await page.waitForFunction((k) => document.querySelector('#verdict')?.textContent.includes(`"${k}":`), key);
  return page.textContent('#verdict');
}

// valueAt reads bit or counter i from a filter's bytes (docs/format.md);
// a split-block filter's bits are numbered as a classic filter's.
export function valueAt(bytes, kind, i) {
  if (kind === 'counting') return (bytes[64 + (i >> 1)] >> (i % 2 ? 4 : 0)) & 15;
  return (bytes[64 + Math.floor(i / 8)] >> (i % 8)) & 1;
}

// What the page shows of how a key became its positions: the positions
// (data-pos, in probe order) and named values (data-value).
export async function hashMath() {
  return page.$eval('#hashmath', (box) => ({
    hidden: box.hidden,
    text: box.textContent,
    positions: [...box.querySelectorAll('[data-pos]')].map((c) => Number(c.dataset.pos)),
    values: Object.fromEntries([...box.querySelectorAll('[data-value]')].map((c) => [c.dataset.value, c.textContent])),
  }));
}

export async function sizeMath() {
  return page.$eval('#sizemath', (box) => ({
    text: box.textContent,
    results: Object.fromEntries(
      [...box.querySelectorAll('[data-result]')].map((c) => [c.dataset.result, c.textContent]),
    ),
  }));
}

// The filter's bytes as the page saves them (its Download button).
export async function savedBytes() {
  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download the filter' }).click(),
  ]);
  return readFile(await dl.path());
}
export const keyField = () => page.getByRole('textbox', { name: 'Key', exact: true });
export const button = (name) => page.getByRole('button', { name, exact: true });

/**
 * costlyFalsePositive finds, in Node, a key never added that the counting
 * filter c says "probably" to and whose removal makes some of keys answer
 * "certainly not" (all of mustLose among them): { fp, lost }.
 */
export function costlyFalsePositive(c, keys, mustLose = []) {
  for (let i = 0; ; i++) {
    const key = `never-${i}`;
    if (!c.has(key)) continue;
    const trial = eb.CountingBloomFilter.fromBytes(c.toBytes());
    trial.remove(key);
    const lost = keys.filter((k) => !trial.has(k));
    trial.free();
    if (lost.length && mustLose.every((k) => lost.includes(k))) return { fp: key, lost };
  }
}

/** contrastRatio is WCAG's contrast ratio of two opaque colours written "rgb(r, g, b)". */
export function contrastRatio(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c
      .match(/[\d.]+/g)
      .slice(0, 3)
      .map(Number);
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(bl);
  };
  const [x, y] = [lum(a), lum(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

// contrastFailures lists the visible text of the page whose contrast with
// what is behind it is under WCAG AA: 4.5, or 3 for large text (24 px, or
// 18.66 px bold). Disabled controls are exempt, as WCAG says.
export function contrastFailures(p) {
  return p.evaluate(() => {
    const rgba = (c) => {
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return null;
      const [r, g, b, a = 1] = m[1]
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return [r, g, b, a];
    };
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]));
    // The background behind e: the first opaque one up the tree, with the
    // translucent ones above it laid over it.
    const behind = (e) => {
      const layers = [];
      for (let n = e; n; n = n.parentElement) {
        const c = rgba(getComputedStyle(n).backgroundColor);
        if (c && c[3] > 0) layers.push(c);
        if (c && c[3] === 1) break;
      }
      let bg = [255, 255, 255];
      for (const l of layers.reverse()) bg = over(l, bg);
      return bg;
    };
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.textContent.trim()) continue;
      const e = t.parentElement;
      if (!e.checkVisibility?.({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      if (e.closest('[aria-hidden="true"], :disabled, title')) continue;
      const cs = getComputedStyle(e);
      const inSvg = e instanceof SVGElement;
      const fg = rgba(inSvg ? cs.fill : cs.color);
      if (!fg) continue;
      const bg = behind(inSvg ? e.closest('svg') : e);
      const f = over(fg, bg);
      const [a, b] = [lum(f), lum(bg)];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      const size = parseFloat(cs.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) out.push(`${t.textContent.trim().slice(0, 40)}: ${ratio.toFixed(2)}`);
    }
    return out;
  });
}

// unnamed lists the controls of the page without an accessible name.
export function unnamed(p) {
  return p.evaluate(() => {
    const name = (e) =>
      e.getAttribute('aria-label') ||
      (e.getAttribute('aria-labelledby') ?? '')
        .split(' ')
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join('') ||
      [...(e.labels ?? [])].map((l) => l.textContent).join('') ||
      (['BUTTON', 'A', 'SUMMARY'].includes(e.tagName) ? e.textContent : '');
    return [...document.querySelectorAll('button, input, select, textarea, summary, a[href], [tabindex]')]
      .filter((e) => !name(e).trim())
      .map((e) => e.outerHTML.slice(0, 80));
  });
}

// goFilters returns the filters Go wrote into the golden vectors
// (bloom/testdata/vectors.json, see its README), with the keys they hold.
export async function goFilters() {
  const v = JSON.parse(await readFile(vectorsPath, 'utf8'));
  const filters = [...v.filters, ...v.blocked].filter(
    (f) => f.base64 && Array.isArray(f.probes) && Array.isArray(f.has),
  );
  assert.ok(filters.length >= 3, 'the golden vectors hold filters');
  return filters;
}

// binomialRange returns the counts [lo, hi] that X ~ Binomial(n, p) falls
// below or above each with probability under alpha, summed term by term.
export function binomialRange(n, p, alpha) {
  const pmf = new Float64Array(n + 1);
  // From the mode outwards, in logs, so that no term underflows first.
  const logPmf = (x) => logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log1p(-p);
  for (let x = 0; x <= n; x++) pmf[x] = Math.exp(logPmf(x));
  let lo = 0;
  for (let below = 0; lo < n && below + pmf[lo] < alpha; lo++) below += pmf[lo];
  let hi = n;
  for (let above = 0; hi > 0 && above + pmf[hi] < alpha; hi--) above += pmf[hi];
  return [lo, hi];
}

function logChoose(n, x) {
  return logFactorial(n) - logFactorial(x) - logFactorial(n - x);
}

const logFactorials = [0];
function logFactorial(n) {
  for (let i = logFactorials.length; i <= n; i++) logFactorials[i] = logFactorials[i - 1] + Math.log(i);
  return logFactorials[n];
}
