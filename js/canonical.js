// canonicalURL: the Go package urlkey (urlkey/urlkey.go documents the
// rules) in plain JS on the WHATWG URL parser, which node, browsers and
// workerd all have. Go's x/net/idna is not compiled into the wasm, which
// is at its size budget; the URL parser maps hosts with the same UTS #46
// profile. Both sides are tested on urlkey/testdata/cases.json and on
// generated URLs and must agree byte for byte: this file adds to the URL
// parser exactly the checks urlkey makes and browsers do not.
//
// One known difference: for IDN hosts that break UTS #46's Bidi or
// ContextJ rules (right-to-left labels mixed with digits or Latin, stray
// joiners), Go refuses them and some URL parsers accept them (Node 20's
// ada 2.9 accepts "١.com"), so this function returns a key where Go errs.

const DEFAULT_PORTS = { http: '80', https: '443', ws: '80', wss: '443' };

const TRACKING = new Set([
  'gclid',
  'gclsrc',
  'gbraid',
  'wbraid',
  'dclid',
  '_ga',
  '_gl',
  'fbclid',
  'msclkid',
  'mc_cid',
  'mc_eid',
  'yclid',
  'igshid',
  'twclid',
  'ttclid',
  'li_fat_id',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
]);

const HEX = '0123456789ABCDEF';
// Class of each ASCII character, as in urlkey's escape.go: 0 percent-encode,
// 1 unreserved (literal, decoded when escaped), 2 reserved (kept as given).
const CLASS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') CLASS[c.charCodeAt(0)] = 1;
for (const c of ":/?#[]@!$&'()*+,;=") CLASS[c.charCodeAt(0)] = 2;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\x00-\x1f\x7f]/;
const TRIM = /^[\x00-\x20]+|[\x00-\x20]+$/g;
const HOST_LABEL = /^[a-z0-9\-_]+$/;
const ESCAPE = /^%[0-9A-Fa-f]{2}/;

const fail = (message) => {
  throw new TypeError(`urlkey: ${message}`);
};

const escapeByte = (b) => '%' + HEX[b >> 4] + HEX[b & 15];

// urlkey's normalizeEscapes, on a string the URL parser has already made
// ASCII (it writes non-ASCII as UTF-8 escapes; any left is encoded here).
function normalizeEscapes(s, query) {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 && ESCAPE.test(s.slice(i, i + 3))) {
      const d = Number.parseInt(s.slice(i + 1, i + 3), 16);
      out += d < 128 && CLASS[d] === 1 ? String.fromCharCode(d) : escapeByte(d);
      i += 2;
    } else if (c >= 128) {
      const n = c >= 0xd800 && c < 0xdc00 ? 2 : 1;
      for (const b of new TextEncoder().encode(s.slice(i, i + n))) out += escapeByte(b);
      i += n - 1;
    } else if (CLASS[c] === 0 || (query && c === 0x27)) {
      out += escapeByte(c);
    } else {
      out += s[i];
    }
  }
  return out;
}

// Punycode (RFC 3492) decoding of an A-label's payload; throws on input
// that is not Punycode.
function punycodeDecode(input) {
  const base = 36;
  const out = [];
  const delim = input.lastIndexOf('-');
  for (let i = 0; i < Math.max(delim, 0); i++) {
    if (input.charCodeAt(i) >= 0x80) fail('invalid punycode');
    out.push(input.charCodeAt(i));
  }
  let n = 128;
  let bias = 72;
  let i = 0;
  for (let pos = delim > 0 ? delim + 1 : 0; pos < input.length;) {
    const oldi = i;
    for (let w = 1, k = base; ; k += base) {
      if (pos >= input.length) fail('invalid punycode');
      const c = input.charCodeAt(pos++);
      const digit =
        c >= 0x30 && c <= 0x39 ? c - 22 : c >= 0x61 && c <= 0x7a ? c - 0x61 : c >= 0x41 && c <= 0x5a ? c - 0x41 : base;
      if (digit >= base || digit > Math.floor((0x7fffffff - i) / w)) fail('invalid punycode');
      i += digit * w;
      const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
      if (digit < t) break;
      if (w > Math.floor(0x7fffffff / (base - t))) fail('invalid punycode');
      w *= base - t;
    }
    const len = out.length + 1;
    let delta = oldi === 0 ? Math.floor((i - oldi) / 700) : (i - oldi) >> 1;
    delta += Math.floor(delta / len);
    let k = 0;
    for (; delta > 455; k += base) delta = Math.floor(delta / 35);
    bias = k + Math.floor((36 * delta) / (delta + 38));
    if (Math.floor(i / len) > 0x10ffff - n) fail('invalid punycode');
    n += Math.floor(i / len);
    i %= len;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) fail('invalid punycode');
    out.splice(i++, 0, n);
  }
  return String.fromCodePoint(...out);
}

function canonicalPath(p) {
  if (p === '' || p === '/') return '/';
  const segs = p.slice(1).split('/');
  const out = [];
  segs.forEach((raw, i) => {
    const seg = normalizeEscapes(raw, false);
    const last = i === segs.length - 1;
    if (seg === '..' || seg === '.') {
      if (seg === '..') out.pop();
      if (last) out.push('');
    } else {
      out.push(seg);
    }
  });
  return '/' + out.join('/');
}

const keyOf = (param) => {
  const i = param.indexOf('=');
  return i < 0 ? param : param.slice(0, i);
};

/** Reports whether a query key, percent-encoding normalized, is a tracking parameter. */
function isTrackingParam(key) {
  const k = key.toLowerCase();
  return k.startsWith('utm_') || TRACKING.has(k);
}

function canonicalQuery(q, keepTracking) {
  if (q === '') return '';
  const kept = normalizeEscapes(q, true)
    .split('&')
    .filter((p) => p !== '' && (keepTracking || !isTrackingParam(keyOf(p))));
  // Array.prototype.sort is stable; the keys are ASCII, so comparing UTF-16
  // code units is comparing bytes, as Go does.
  kept.sort((a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  return kept.join('&');
}

/**
 * The canonical form of an absolute http, https, ws or wss URL, the same
 * string Go's urlkey.Canonical returns. Throws a TypeError whose message
 * starts with "urlkey: " for input it cannot canonicalize.
 * @param {string} url
 * @param {{ keepTracking?: boolean }} [opts]
 * @returns {string}
 */
export function canonicalURL(url, opts) {
  if (typeof url !== 'string') throw new TypeError(`edgebloom: canonicalURL(url) takes a string, got ${typeof url}`);
  if (opts !== undefined && (opts === null || typeof opts !== 'object')) {
    throw new TypeError('edgebloom: canonicalURL(url, opts) takes an options object as "opts"');
  }
  const keepTracking = opts?.keepTracking ?? false;
  if (typeof keepTracking !== 'boolean') throw new TypeError('edgebloom: "keepTracking" must be a boolean');

  // The checks urlkey makes before parsing, in the same order.
  const s = url.replace(TRIM, '');
  if (LONE_SURROGATE.test(s)) fail('invalid UTF-8');
  if (CONTROL.test(s)) fail('control character');
  const colon = s.indexOf(':');
  if (colon < 0) fail('no scheme');
  const scheme = s.slice(0, colon).toLowerCase();
  if (!Object.hasOwn(DEFAULT_PORTS, scheme))
    fail(`scheme ${JSON.stringify(s.slice(0, colon))} is not http, https, ws or wss`);
  const rest = s.slice(colon + 1);
  if (!rest.startsWith('//') || rest[2] === '/' || rest[2] === '\\') fail(`want ${scheme}:// and a host`);
  const q = rest.search(/[?#]/);
  if ((q < 0 ? rest : rest.slice(0, q)).includes('\\')) fail('backslash before the query');

  let u;
  try {
    u = new URL(s);
  } catch {
    fail(`invalid URL ${JSON.stringify(s.length > 64 ? s.slice(0, 64) + '...' : s)}`);
  }
  let host = u.hostname;
  if (!host.startsWith('[')) {
    // The URL parser has mapped the host; urlkey allows less punctuation.
    const labels = (host.endsWith('.') ? host.slice(0, -1) : host).split('.');
    if (!labels.every((l) => HOST_LABEL.test(l)))
      fail(`host ${JSON.stringify(host)} has characters or empty labels urlkey refuses`);
    // An A-label whose Punycode encodes nothing non-ASCII (see urlkey's
    // asciiALabel): the URL parser keeps it, x/net/idna would decode it.
    const l = labels.find((l) => l.startsWith('xn--') && (l.length === 4 || l.endsWith('-')));
    if (l !== undefined) fail(`label ${JSON.stringify(l)} encodes no non-ASCII character`);
    // Some parsers (Chromium's) keep A-labels without checking them. Like
    // UTS #46 and Go, decode them and require that the Unicode form maps
    // back to the same host.
    if (labels.some((l) => l.startsWith('xn--'))) {
      const unicode = labels.map((l) => (l.startsWith('xn--') ? punycodeDecode(l.slice(4)) : l)).join('.');
      let again;
      try {
        again = new URL(`http://${unicode}/`).hostname;
      } catch {
        again = null;
      }
      if (again !== (host.endsWith('.') ? host.slice(0, -1) : host))
        fail(`host ${JSON.stringify(host)} has an invalid A-label`);
    }
  }
  // The URL parser already dropped the default port.
  if (u.port !== '' && u.port !== DEFAULT_PORTS[scheme]) host += ':' + u.port;
  const query = canonicalQuery(u.search.slice(1), keepTracking);
  return `${scheme}://${host}${canonicalPath(u.pathname)}${query === '' ? '' : '?' + query}`;
}
