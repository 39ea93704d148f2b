// The checkpoint object of a filter ("ckpt:{name}", served by the Shard
// class): the list of checkpoints the service published for the filter's
// generation, so that every front, in every isolate and colo, names the
// same cursor by the same checkpoint number. A checkpoint's cursor never
// changes once published, which is what makes the deltas between
// checkpoints immutable and cacheable (front/checkpoints.go; see front/objects.go for
// the protocol):
//
//   GET  /checkpoints?generation=G&interval=MS → {generation, checkpoints:
//        [{n, cursor, time}], due}: due is true for one caller at a time
//        (a lease of LEASE_MS) once interval ms passed since the last check,
//        so that one front, not every front whose cached "latest" expired,
//        reads the shards' positions.
//   POST /checkpoints {generation, after, cursor} → the same: publishes
//        cursor as checkpoint after+1 if after is still the newest (a
//        racing front loses and reads the winner's), or only notes the
//        check when cursor is the newest checkpoint's (nothing changed).
//
// A newer generation starts an empty list; an older one is refused with
// 409 stale_generation, as the shards refuse it. It keeps the last
// KEPT_CHECKPOINTS of a generation (abi.js, generated from Go's
// internal/abi): a copy older than the oldest loads a snapshot.

import { KEPT_CHECKPOINTS } from './abi.js';

const LEASE_MS = 10_000;

const reply = (status, value) =>
  new Response(JSON.stringify(value), { status, headers: { 'Content-Type': 'application/json' } });
const refuse = (status, code, message) => reply(status, { error: { code, message } });

/**
 * Serves /checkpoints for obj (a Shard, whose getKV/putKV keep the state in
 * its SQLite storage).
 */
export function checkpoints(obj, method, url, body) {
  let generation;
  let input = {};
  if (method === 'GET') {
    generation = Number(url.searchParams.get('generation'));
  } else if (method === 'POST') {
    try {
      input = JSON.parse(body);
    } catch {
      input = {};
    }
    generation = input.generation;
  } else {
    return refuse(405, 'method_not_allowed', 'checkpoints: GET or POST /checkpoints');
  }
  if (!Number.isSafeInteger(generation) || generation < 1)
    return refuse(400, 'bad_checkpoint_request', '/checkpoints takes a positive integer generation');
  let state = obj.getKV('checkpoints');
  if (state && state.generation > generation)
    return refuse(
      409,
      'stale_generation',
      `the checkpoints are of generation ${state.generation}; the request is of generation ${generation}, older: read the filter's parameters again`,
    );
  if (!state || state.generation < generation) state = { generation, list: [], checked: 0, lease: 0 };
  const now = Date.now();
  if (method === 'GET') {
    const interval = Number(url.searchParams.get('interval'));
    if (!Number.isSafeInteger(interval) || interval < 1)
      return refuse(400, 'bad_checkpoint_request', 'GET /checkpoints takes a positive integer interval (ms)');
    const due = now - state.checked >= interval && now >= state.lease;
    if (due) {
      state.lease = now + LEASE_MS;
      obj.putKV('checkpoints', state);
    }
    return reply(200, { generation, checkpoints: state.list, due });
  }
  const { after, cursor } = input;
  if (!Number.isSafeInteger(after) || after < 0 || typeof cursor !== 'string' || cursor === '')
    return refuse(400, 'bad_checkpoint_request', 'POST /checkpoints takes {"generation", "after", "cursor"}');
  const last = state.list.at(-1);
  if ((last?.n ?? 0) === after) {
    if (last?.cursor !== cursor) {
      state.list.push({ n: after + 1, cursor, time: now });
      if (state.list.length > KEPT_CHECKPOINTS) state.list.splice(0, state.list.length - KEPT_CHECKPOINTS);
    }
    state.checked = now;
    state.lease = 0;
    obj.putKV('checkpoints', state);
  }
  return reply(200, { generation, checkpoints: state.list, due: false });
}
