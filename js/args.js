// The checks of the arguments every API takes: each names the argument and
// the rule it breaks, as a TypeError or a RangeError.

import { MAX_BITS, MAX_GENERATIONS, MAX_HASHES } from './abi.js';

// The largest filter the WebAssembly engine makes or loads (2^32 bits, 512
// MiB), and the most generations of a window (Go's bloom.MaxGenerations).
export { MAX_BITS, MAX_GENERATIONS };

/** Internal: the token that lets a filter class reach the Filter constructor. */
export const CONSTRUCT = Symbol('construct');

export function positiveInteger(name, value, max) {
  if (typeof value !== 'number') throw new TypeError(`edgebloom: "${name}" must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`edgebloom: "${name}" must be an integer from 1 to ${max}, got ${value}`);
  }
  return value;
}

export function rate(name, value) {
  if (typeof value !== 'number') throw new TypeError(`edgebloom: "${name}" must be a number, got ${typeof value}`);
  if (!(value > 0 && value < 1))
    throw new RangeError(`edgebloom: "${name}" must be between 0 and 1 (exclusive), got ${value}`);
  return value;
}

export function options(value, what) {
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`edgebloom: ${what} takes an options object`);
  }
  return value;
}

// sizeArgs validates { capacity, errorRate } or { bits, hashes }.
export function sizeArgs(opts, what) {
  opts = options(opts, what);
  if (opts.bits !== undefined || opts.hashes !== undefined) {
    return [1, positiveInteger('bits', opts.bits, MAX_BITS), positiveInteger('hashes', opts.hashes, MAX_HASHES)];
  }
  return [0, positiveInteger('capacity', opts.capacity, Number.MAX_SAFE_INTEGER), rate('errorRate', opts.errorRate)];
}

/**
 * Internal: checks the arguments of every fromBytes, and gives the input as
 * a Uint8Array and the size bound (default MAX_BITS).
 */
export function loadArgs(bytes, opts) {
  if (!(bytes instanceof Uint8Array)) {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw new TypeError('edgebloom: fromBytes takes a Uint8Array, an ArrayBuffer or a typed array');
  }
  let maxBits = MAX_BITS;
  if (opts !== undefined) {
    options(opts, 'fromBytes');
    if (opts.maxBits !== undefined) maxBits = positiveInteger('maxBits', opts.maxBits, MAX_BITS);
  }
  return { bytes, maxBits };
}
