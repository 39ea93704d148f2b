// Processes and files of the tests: temp dirs and one cleanup() for
// everything the kit started, commands run in their own process group (so
// that a test can end them whole), servers started as commands, and free
// ports on 127.0.0.1.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The node:test timeout of a test that starts browsers or workerd: long enough for a busy machine, short of forever. */
export const timeout = 180_000;

// ---- temp dirs and cleanup --------------------------------------------------

/** A fresh temp dir; removed by cleanup(). */
export async function tempDir(prefix) {
  const dir = await mkdtemp(path.join(tmpdir(), `edgebloom-test-${prefix}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const cleanups = [];

/** Runs fn at cleanup(), latest first. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/** Stops and removes everything started through this module. For `after`. */
export async function cleanup() {
  const errors = [];
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length) throw new AggregateError(errors, 'test cleanup failed');
}

/** Writes files ({relative path: contents}) under dir, making directories. */
export async function writeFiles(dir, files) {
  for (const [name, contents] of Object.entries(files)) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof contents === 'string' ? contents : JSON.stringify(contents, null, 2));
  }
}

// ---- child processes ----------------------------------------------------------

/**
 * Runs a command in its own process group and resolves with its output when
 * it exits with status 0; rejects with the output otherwise. cleanup() kills
 * the group if it is still running.
 */
export function run(cmd, args, { cwd = repoRoot, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...quietEnv, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let running = true;
    cleanups.push(() => {
      if (!running) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch (err) {
        if (err.code !== 'ESRCH') throw err;
      }
    });
    child.on('error', (err) => {
      running = false;
      reject(err);
    });
    child.on('close', (code, signal) => {
      running = false;
      if (code === 0) resolve(output);
      else reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited with ${code ?? signal}:\n${output}`));
    });
  });
}

// No telemetry, no update checks, no audit: nothing beyond this machine.
export const quietEnv = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CI: '1',
  NO_COLOR: '1',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/**
 * Starts `cmd args` in its own process group and resolves with the first
 * http://127.0.0.1:PORT URL it prints, once it printed one; rejects if it
 * exits first. cleanup() ends the group.
 */
export function startServer(cmd, args, { cwd, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let running = true;
    cleanups.push(() => {
      if (running) process.kill(-child.pid, 'SIGKILL');
    });
    const onData = (d) => {
      output += d;
      const url = output.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0];
      if (url) resolve({ url, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running = false;
      reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal} before it printed its URL:\n${output}`));
    });
  });
}

/**
 * Ends the process group of child, a group leader (spawned detached): SIGTERM,
 * then SIGKILL when it is still there 5 s later; resolves once exited (the
 * child's exit, as a promise) has.
 */
export async function endGroup(child, exited) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {}
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }, 5000);
  await exited;
  clearTimeout(timer);
}

/** Returns a free TCP port on 127.0.0.1. */
export async function freePort() {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}
