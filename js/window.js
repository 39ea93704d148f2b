// The window of generations (kind 4): the keys of the last few periods.
import { KIND_WINDOW } from './abi.js';
import { Filter, layers, rotate } from './filter.js';
import { load } from './decode.js';
import { CONSTRUCT, MAX_GENERATIONS, options, positiveInteger, rate } from './args.js';

/**
 * The keys of the last few periods: generations classic filters, of which
 * rotate() drops the oldest and starts an empty newest one. add() writes to
 * the newest and reports whether no generation had the key; has() asks all.
 */
export class WindowBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      opts = options(opts, 'new WindowBloomFilter');
      const n = positiveInteger('capacityPerGeneration', opts.capacityPerGeneration, Number.MAX_SAFE_INTEGER);
      const p = rate('errorRate', opts.errorRate);
      const g = positiveInteger('generations', opts.generations, MAX_GENERATIONS);
      super(CONSTRUCT, KIND_WINDOW, 0, n, p, undefined, g);
    }
  }
  /** Drops the oldest generation and starts an empty newest one. */
  rotate() {
    rotate(this);
  }
  get generations() {
    return layers(this);
  }
  static fromBytes(bytes, opts) {
    return load(WindowBloomFilter, bytes, opts, KIND_WINDOW);
  }
}
