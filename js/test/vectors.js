// The golden vectors that Go writes (bloom/testdata/vectors.json).
import { readFileSync } from 'node:fs';

export const vectors = JSON.parse(readFileSync(new URL('../../bloom/testdata/vectors.json', import.meta.url), 'utf8'));

export const fromBase64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));
