// The page's state in its address (address.js): read back as written, and
// every wrong parameter named with its rule, the rest still used.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressOf, parseAddress } from '../address.js';

test('a state written to the address reads back the same', () => {
  for (const state of [
    { kind: 'counting', sizing: 'mk', n: 6, m: 40, k: 3, keys: ['red', 'green', 'a,b&c=d', 'ключ'], anyway: ['x 1'] },
    { sizing: 'np', n: 100, p: 0.05, keys: ['apple'], step: 4 },
    { kind: 'blocked', sizing: 'mk', n: 10, m: 1024 },
  ]) {
    const query = addressOf(state);
    const { state: back, errors } = parseAddress(query);
    assert.deepEqual(errors, [], query);
    for (const [name, value] of Object.entries(state)) assert.deepEqual(back[name], value, `${name} of ${query}`);
  }
  assert.equal(addressOf({ sizing: 'np', n: 100, p: 0.05 }), '?n=100&p=0.05');
  assert.equal(parseAddress('?p=1%25').state.p, 0.01);
});

test('each wrong parameter is named with its rule, and the right ones are kept', () => {
  const { state, errors } = parseAddress('?kind=quantum&n=0&p=2&k=99&step=9&color=red&key=fine');
  assert.deepEqual(state, { keys: ['fine'] });
  const said = errors.join('\n');
  assert.match(said, /kind="quantum" is not used: kind is one of classic, counting, blocked\./);
  assert.match(said, /n="0" is not used: n is a whole number of keys from 1/);
  assert.match(said, /p="2" is not used: p is a rate more than 0 and less than 1/);
  assert.match(
    parseAddress('?p=0.01&m=100').errors[0],
    /p="0.01" is not used: a filter is sized from n and p, or from m and k, not both\./,
  );
  assert.match(said, /k="99" is not used: k is a whole number of hashes from 1 to 64\./);
  assert.match(said, /step="9" is not used: step is a number of the tour, from 1 to 8\./);
  assert.match(said, /color="red" is not used: the page knows kind, n, p, m, k, key, anyway, step\./);
  assert.match(parseAddress('?p=abc').errors[0], /p="abc" is not used: p is a rate more than 0 and less than 1/);
  assert.match(parseAddress('?kind=blocked&m=1000').errors[0], /multiple of 256/);
  assert.match(parseAddress('?anyway=x').errors[0], /only a counting filter removes keys/);
  assert.match(parseAddress('?n=5&n=6').errors[0], /give n once/);
  assert.match(parseAddress(`?key=${'x'.repeat(201)}`).errors[0], /a key has 1 to 200 characters/);
  assert.deepEqual(parseAddress('').state, {});
});
