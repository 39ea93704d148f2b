// A page that dedups URLs with edgebloom, loaded as plain ES modules: the
// import map in index.html maps 'edgebloom' to the installed package's
// browser entry, which fetches edgebloom.wasm from beside itself.
import { init, BloomFilter, canonicalURL } from 'edgebloom';

await init(); // fetches /edgebloom/edgebloom.wasm (compileStreaming when served as application/wasm)
const seen = new BloomFilter({ capacity: 100_000, errorRate: 0.01 }); // 117 KiB

const form = document.getElementById('form');
const urls = document.getElementById('urls');
const results = document.getElementById('results');
const stats = document.getElementById('stats');

form.addEventListener('submit', (event) => {
  event.preventDefault();
  for (const line of urls.value.split('\n')) {
    const url = line.trim();
    if (!url) continue;
    const li = document.createElement('li');
    let key;
    try {
      key = canonicalURL(url);
    } catch (err) {
      li.textContent = `${url}: not a URL (${err.message})`;
      li.className = 'error';
      results.append(li);
      continue;
    }
    const isNew = seen.add(key);
    li.textContent = `${url}: ${isNew ? 'new' : 'seen'}`;
    li.className = isNew ? 'new' : 'seen';
    results.append(li);
  }
  urls.value = '';
  const s = seen.stats(); // one pass over the bits
  stats.textContent = `${s.count} URLs in ${seen.byteLength} bytes, estimated false-positive rate ${(s.estimatedErrorRate * 100).toFixed(4)} %`;
});

urls.disabled = false;
document.getElementById('check').disabled = false;
document.body.dataset.ready = 'true';
