// The scalable Bloom filter (kind 3): grows by layers and keeps its error rate.
import { KIND_SCALABLE } from './abi.js';
import { Filter, layers, load } from './filter.js';
import { CONSTRUCT, options, positiveInteger, rate } from './args.js';

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
  static fromBytes(bytes, opts) {
    return load(ScalableBloomFilter, bytes, opts, KIND_SCALABLE);
  }
}
