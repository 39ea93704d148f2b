// Numbers as the page writes them (format.js): the slips a student would
// catch in a rate, a tick, a minus or the rounding up of the size.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ceilArg, fmtPercentTick, fmtRate, fmtTick, minus } from '../format.js';

test('a rate below a millionth of a percent has a mantissa from 1 to 9.99, never 10.0', () => {
  assert.equal(fmtRate(9.9996e-10), '1.00 × 10⁻⁷ %');
  assert.equal(fmtRate(9.99e-10), '9.99 × 10⁻⁸ %');
  assert.equal(fmtRate(1.68e-9), '1.68 × 10⁻⁷ %');
  assert.equal(fmtRate(9.9999e-9), '1.00 × 10⁻⁶ %');
  assert.equal(fmtRate(0.05), '5.00 %');
  for (let x = 1e-14; x < 1e-8; x *= 1.0007) assert.match(fmtRate(x), /^[1-9]\.\d\d × 10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+ %$/, String(x));
});

test("a chart's ticks stay short: from 0.001 % down, a power of ten", () => {
  assert.deepEqual([0, -1, -2, -3, -4, -5, -6, -8, -10].map(fmtPercentTick), [
    '100 %',
    '10 %',
    '1 %',
    '0.1 %',
    '0.01 %',
    '0.001 %',
    '10⁻⁴ %',
    '10⁻⁶ %',
    '10⁻⁸ %',
  ]);
});

test('the number rounded up shows that it is not whole, with a minus that is a minus', () => {
  assert.equal(ceilArg(9585.0583), '9,585.05');
  assert.equal(ceilArg(9585.0004), '9,585.0004');
  assert.equal(ceilArg(623.87), '623.87');
  assert.equal(ceilArg(624), '624');
  assert.equal(minus(-2.996), '−2.996');
  assert.equal(minus('-3'), '−3');
  assert.equal(minus(4), '4');
});

test('ticks at 1, 2 and 5 times a power of ten read as percentages', () => {
  assert.deepEqual([1, 0.5, 0.2, 0.1, 0.05, 0.02, 2e-5, 1e-5, 5e-8].map(fmtTick), [
    '100 %',
    '50 %',
    '20 %',
    '10 %',
    '5 %',
    '2 %',
    '0.002 %',
    '0.001 %',
    '5 × 10⁻⁶ %',
  ]);
});
