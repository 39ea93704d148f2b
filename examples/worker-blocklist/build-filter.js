// Builds the blocklist filter the Worker ships with: every line of the input
// (an http or https URL) in its canonical form, in a classic filter, written
// in edgebloom's portable format.
//
//   node build-filter.js blocklist.txt src/blocklist.bloom
//
// The CLI makes the same file, byte for byte:
//   edgebloom build --canonical -n 10000 -p 0.0001 -o src/blocklist.bloom blocklist.txt
import { readFileSync, writeFileSync } from 'node:fs';
import { init, BloomFilter } from 'edgebloom';
import { blocklistKey } from './src/key.js';

// Room for 10,000 URLs at one false positive in 10,000: 23 KiB. Raise the
// capacity before the list outgrows it; a Worker's script (filter included)
// may be 3 MB gzipped on the free plan, 10 MB on a paid one.
const capacity = 10_000;
const errorRate = 0.0001;

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node build-filter.js BLOCKLIST.txt OUT.bloom (one http or https URL a line)');
  process.exit(2);
}

await init();
const filter = new BloomFilter({ capacity, errorRate });
const lines = readFileSync(input, 'utf8').split('\n');
lines.forEach((line, i) => {
  const url = line.trim();
  if (!url || url.startsWith('#')) return;
  try {
    filter.add(blocklistKey(url));
  } catch (err) {
    console.error(`${input}:${i + 1}: ${err.message}: fix or remove the line`);
    process.exit(1);
  }
});
if (filter.overCapacity) {
  console.error(
    `${input} has ${filter.count} URLs, more than the filter is made for: raise capacity in build-filter.js`,
  );
  process.exit(1);
}
writeFileSync(output, filter.toBytes());
console.log(`${output}: ${filter.count} URLs, ${filter.byteLength} bytes`);
