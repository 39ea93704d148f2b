// The scalable Bloom filter (kind 3): grows by layers and keeps its error rate.
import { KIND_SCALABLE } from './abi.js';
import { Filter, growth, layers } from './filter.js';
import { load } from './decode.js';
import { CONSTRUCT, options, positiveInteger, rate } from './args.js';
import { budgetRoom, live, tooLarge } from './core.js';

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
