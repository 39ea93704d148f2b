// Crawler-like URLs, the same ones the Go benchmarks use: a port of
// ../urls_test.go (appendURL, scramble, the SplitMix64 rng and probeMix),
// checked against it URL for URL (see README.md). 64-bit arithmetic is done
// in two 32-bit halves, which is about ten times faster than BigInt here.
//
// URLs are written as bytes into one buffer, as the Go corpus is, and turned
// into strings by Buffer#latin1Slice: each string is a fresh, flat
// (sequential one-byte) string, never a rope of concatenations, so no
// library pays for flattening inside a timed loop. They are all ASCII.

export const corpusSeed = 0xed9eb100n;
export const firstAbsent = 2 ** 39;
export const numAbsent = 1_000_000;

const MASK64 = (1n << 64n) - 1n;
const MASK40 = (1n << 40n) - 1n;

// A SplitMix64 generator with its state in two uint32 halves.
class Rng {
  constructor(seed) {
    seed = BigInt.asUintN(64, seed);
    this.hi = Number(seed >> 32n) >>> 0;
    this.lo = Number(seed & 0xffffffffn) >>> 0;
    // The output of the last next(): only its high half is ever used.
    this.outHi = 0;
  }

  next() {
    // state += 0x9e3779b97f4a7c15
    let lo = this.lo + 0x7f4a7c15;
    let hi = (this.hi + 0x9e3779b9 + (lo > 0xffffffff ? 1 : 0)) >>> 0;
    lo >>>= 0;
    this.lo = lo;
    this.hi = hi;
    // z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
    let zlo = (lo ^ ((lo >>> 30) | (hi << 2))) >>> 0;
    let zhi = (hi ^ (hi >>> 30)) >>> 0;
    [zhi, zlo] = mul64(zhi, zlo, 0xbf58476d, 0x1ce4e5b9);
    // z = (z ^ z>>27) * 0x94d049bb133111eb
    zlo = (zlo ^ ((zlo >>> 27) | (zhi << 5))) >>> 0;
    zhi = (zhi ^ (zhi >>> 27)) >>> 0;
    [zhi] = mul64(zhi, zlo, 0x94d049bb, 0x133111eb);
    // z ^ z>>31: the high half is zhi ^ zhi>>31
    this.outHi = (zhi ^ (zhi >>> 31)) >>> 0;
  }

  // intn returns a number in [0, n): ((next() >> 32) * n) >> 32, exact in
  // doubles for the n used here (n < 2^21).
  intn(n) {
    this.next();
    return Math.floor((this.outHi * n) / 4294967296);
  }
}

// mul64 returns the low 64 bits of (ahi:alo) * (bhi:blo) as [hi, lo].
function mul64(ahi, alo, bhi, blo) {
  const a0 = alo & 0xffff;
  const a1 = alo >>> 16;
  const b0 = blo & 0xffff;
  const b1 = blo >>> 16;
  const p00 = a0 * b0;
  const mid = a1 * b0 + a0 * b1 + Math.floor(p00 / 65536); // < 2^34, exact
  const lo = ((mid % 65536) * 65536 + (p00 % 65536)) >>> 0;
  const carry = Math.floor(mid / 65536) + a1 * b1; // < 2^51, exact
  const hi = (carry + Math.imul(ahi, blo) + Math.imul(alo, bhi)) >>> 0;
  return [hi, lo];
}

const syllables = ['ka', 'mo', 'ra', 'ti', 'lo', 'ne', 'su', 'pa', 'vi', 'do',
  'ber', 'gen', 'tor', 'lan', 'mar', 'sel', 'win', 'fox', 'quin', 'zel'];
const tlds = ['.com', '.com', '.com', '.com', '.org', '.net', '.co.uk', '.de', '.io'];
const sections = ['news', 'blog', 'products', 'category', 'articles', 'en', 'en-us',
  'shop', 'p', 'tag', 'sports', 'tech', 'world', 'docs', 'forum', 'wiki', 'item', 'search'];
const words = ['how', 'to', 'best', 'new', 'review', 'guide', 'the', 'for', 'with',
  'cheap', 'top', 'free', 'update', 'release', 'open', 'source', 'city', 'home', 'garden',
  'travel', 'market', 'report', 'video', 'photos', 'live', 'first', 'world', 'summer',
  'winter', 'sale', 'recipe', 'easy', 'chicken', 'election', 'results', 'football',
  'transfer', 'rumours', 'phone', 'laptop', 'deals', 'weekend', 'weather', 'forecast'];
const sources = ['google', 'twitter', 'facebook', 'newsletter', 'reddit', 'bing', 'linkedin'];
const mediums = ['email', 'social', 'cpc', 'rss', 'referral'];

// scramble is the bijection on [0, 2^40) of urls_test.go.
function scramble(i) {
  let x = (BigInt(i) * 0x9e3779b97f4a7c15n) & MASK40;
  x ^= x >> 21n;
  x = (x * 0xbf58476d1ce4e5b9n) & MASK40;
  x ^= x >> 19n;
  return x;
}

// url returns URL number i (i < 2^40) as a string built by concatenation
// (a rope; the corpus copies it into flat storage).
export function url(i) {
  const r = new Rng(corpusSeed ^ ((BigInt(i) * 0xd1b54a32d192ed03n) & MASK64));
  const target = 40 + r.intn(41) + r.intn(41);
  let s = 'https://www.';
  let host = r.intn(2 ** r.intn(17));
  for (let k = 0; k < 2 || host > 0; k++) {
    s += syllables[host % syllables.length];
    host = Math.floor(host / syllables.length);
  }
  s += tlds[r.intn(tlds.length)];

  const id = scramble(i).toString();
  let tail = 1 + id.length;
  let query = r.intn(10) < 3;
  const src = sources[r.intn(sources.length)];
  const med = mediums[r.intn(mediums.length)];
  const queryLen = '?utm_source='.length + src.length + '&utm_medium='.length + med.length;
  if (query && s.length + 1 + tail + queryLen + 8 > target) query = false;
  if (query) tail += queryLen;

  for (let n = r.intn(3), k = 0; k < n; k++) {
    const sec = sections[r.intn(sections.length)];
    if (s.length + 1 + sec.length + 1 + 8 + tail > target) break;
    s += '/' + sec;
  }
  s += '/';
  for (let sep = false; ; sep = true) {
    let budget = target - tail - s.length;
    if (budget <= 0) break;
    if (sep) {
      if (budget === 1) {
        s += 's';
        break;
      }
      s += '-';
      budget--;
    }
    let w = words[r.intn(words.length)];
    if (w.length > budget) w = w.slice(0, budget);
    s += w;
  }
  s += '-' + id;
  if (query) s += '?utm_source=' + src + '&utm_medium=' + med;
  return s;
}

// A corpus: n URLs back to back in one Buffer, and the same URLs as flat
// strings sliced out of it. corpus is 'crawl' (ASCII, latin1) or 'intl'
// (UTF-8).
export function makeCorpus(first, n, corpus = 'crawl') {
  const intl = corpus === 'intl';
  const make = intl ? intlURL : url;
  const data = Buffer.allocUnsafe(n * (intl ? 256 : 120));
  const end = new Uint32Array(n);
  let off = 0;
  for (let j = 0; j < n; j++) {
    off += intl ? data.utf8Write(make(first + j), off) : data.latin1Write(make(first + j), off);
    end[j] = off;
  }
  const out = new Array(n);
  let start = 0;
  for (let j = 0; j < n; j++) {
    out[j] = intl ? data.utf8Slice(start, end[j]) : data.latin1Slice(start, end[j]);
    start = end[j];
  }
  return { data: data.subarray(0, off), end, strings: out };
}

// probeMix returns numAbsent keys in the order of urls_test.go's probeMix:
// each with probability 1/2 one of the n present keys, else the next absent
// key. It also returns how many of them are present.
export function probeMix(present, absent) {
  const n = present.length;
  const r = new Rng(corpusSeed ^ BigInt(n));
  const mix = new Array(numAbsent);
  let hits = 0;
  for (let j = 0; j < numAbsent; j++) {
    if (r.intn(2) === 0) {
      mix[j] = present[r.intn(n)];
      hits++;
    } else {
      mix[j] = absent[j];
    }
  }
  return { mix, present: hits };
}

// The second corpus, a port of intl_test.go's appendIntlURL: the same hosts
// and words mixed with internationalized domain names in Unicode, Chinese,
// Japanese and Korean path words, emoji and percent escapes. About three
// quarters of its URLs hold non-ASCII characters. Checked against Go: the
// SHA-256 of the first 100 000 URLs, newline-terminated, is equal.
const idnLabels = ['münchen', 'bücher', 'straße', 'café', '例え', '東京', '新闻',
  '서울', 'пример', 'москва', 'παράδειγμα', 'مثال', 'उदाहरण', 'ตัวอย่าง', 'köln', 'zürich'];
const idnTLDs = ['.de', '.jp', '.cn', '.kr', '.рф', '.中国', '.com', '.ch', '.in', '.th'];
const cjkWords = ['新闻', '天气', '北京', '上海', '体育', '东京', 'ラーメン', 'レシピ',
  '価格', '比較', 'ニュース', '天気予報', '뉴스', '검색', '날씨', '쇼핑', '서울', '中文'];
const emoji = ['🍕', '🚀', '😀', '🎉', '🐱', '❤️', '👍🏽', '🇯🇵', '☕', '🌧️'];
const escaped = ['caf%C3%A9', '%E6%96%B0%E9%97%BB', 'na%C3%AFve', '%ED%8C%90',
  'cr%C3%A8me-br%C3%BBl%C3%A9e', '%F0%9F%8D%95', 'a%20b', '%D0%BC%D0%B8%D1%80', 'se%C3%B1or'];

function host(r) {
  let s = 'www.';
  let h = r.intn(2 ** r.intn(17));
  for (let k = 0; k < 2 || h > 0; k++) {
    s += syllables[h % syllables.length];
    h = Math.floor(h / syllables.length);
  }
  return s + tlds[r.intn(tlds.length)];
}

function word(r) {
  const n = r.intn(20);
  if (n < 3) return cjkWords[r.intn(cjkWords.length)];
  if (n < 4) return emoji[r.intn(emoji.length)] + words[r.intn(words.length)];
  if (n < 6) return escaped[r.intn(escaped.length)];
  return words[r.intn(words.length)];
}

// intlURL returns URL number i (i < 2^40) of the second corpus.
export function intlURL(i) {
  const r = new Rng(corpusSeed ^ 0x17e1n ^ ((BigInt(i) * 0x9fb21c651e98df25n) & MASK64));
  let s = 'https://';
  if (r.intn(4) === 0) {
    s += idnLabels[r.intn(idnLabels.length)] + '-' + syllables[r.intn(syllables.length)] + idnTLDs[r.intn(idnTLDs.length)];
  } else {
    s += host(r);
  }
  for (let n = 1 + r.intn(3), k = 0; k < n; k++) {
    s += '/';
    for (let w = 0, m = 1 + r.intn(4); w < m; w++) s += (w > 0 ? '-' : '') + word(r);
  }
  s += '-' + scramble(i).toString();
  if (r.intn(10) < 3) s += '?q=' + word(r);
  return s;
}
