// The scalable Bloom filter (kind 3): grows by layers and keeps its error rate.
import { KIND_SCALABLE } from './abi.js';
import { Filter, layers, load } from './filter.js';
import { CONSTRUCT, options, positiveInteger, rate } from './args.js';
import { optimal } from './classic.js';
import { budgetRoom, live, tooLarge } from './core.js';

// A scalable filter's layers stop growing at 64 (bloom.MaxLayers).
const MAX_LAYERS = 64;

/** A Bloom filter that grows by layers and keeps its error rate. */
export class ScalableBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      opts = options(opts, 'new ScalableBloomFilter');
      const n = positiveInteger('initialCapacity', opts.initialCapacity, Number.MAX_SAFE_INTEGER);
      super(CONSTRUCT, KIND_SCALABLE, 0, n, rate('errorRate', opts.errorRate));
    }
  }
  get layers() {
    return layers(this);
  }
  /** @param {Array<string | Uint8Array>} keys */
  addMany(keys) {
    // A batch that would grow the filter past the memory budget is refused
    // before it adds anything (every key counted as new).
    if (Array.isArray(keys)) {
      const e = live();
      const room = budgetRoom(e);
      const need = growth(this, keys.length, room);
      if (need > room) throw tooLarge(e, `adding ${keys.length} keys to a scalable filter (its new layers)`, need);
    }
    return super.addMany(keys);
  }
  static fromBytes(bytes, opts) {
    return load(ScalableBloomFilter, bytes, opts, KIND_SCALABLE);
  }
}

// growth returns the bytes of the layers scalable filter f makes if it takes
// n new keys, or a number past room as soon as they pass it: its last layer
// takes what its capacity has left, then each new layer (twice the capacity
// of the one before, half its error rate, as bloom/scalable.go makes them)
// takes its capacity in turn.
function growth(f, n, room) {
  const layers = f.layers;
  const capacity = f.capacity;
  const initial = capacity / (2 ** layers - 1);
  let left = n - Math.max(0, capacity - f.count);
  let bytes = 0;
  for (let i = layers; left > 0 && i < MAX_LAYERS && bytes <= room; i++) {
    const c = Math.floor(initial * 2 ** i);
    bytes += Math.ceil(optimal(c, f.errorRate * 0.8 * 0.5 * 0.5 ** i).bits / 64) * 8;
    left -= c;
  }
  return bytes;
}
