// Starts the hbgraph binary the Makefile built (HBGRAPH_BIN) as a child
// process on 127.0.0.1 with a fresh data directory, and talks GraphQL to it.
// Nothing here builds hbgraph or reaches anything but 127.0.0.1.

import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

// No Apollo telemetry, no Apollo Studio (an APOLLO_KEY would turn on usage
// reporting), and no proxy between us and 127.0.0.1, for this process and
// every child it starts.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
delete process.env.APOLLO_KEY;
delete process.env.APOLLO_GRAPH_REF;
process.env.NO_PROXY = process.env.no_proxy = '127.0.0.1,localhost';

const HEALTH_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function hbgraphBin() {
  const bin = process.env.HBGRAPH_BIN;
  if (!bin) {
    throw new Error(
      'HBGRAPH_BIN is not set: it must be the absolute path of a built hbgraph binary ' +
        '(the Makefile sets it; by hand: (cd ../.. && go build -o /tmp/hbgraph-bin .) && HBGRAPH_BIN=/tmp/hbgraph-bin npm test)',
    );
  }
  try {
    accessSync(bin, constants.X_OK);
  } catch (err) {
    throw new Error(`HBGRAPH_BIN=${bin} is not an executable file: ${err.message}`);
  }
  return bin;
}

// Children still running when this process exits (a crash, a hook that never
// ran) are killed rather than left behind, and their data directories go.
const running = new Map(); // child -> data directory
process.once('exit', () => {
  for (const [child, dataDir] of running) {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * Starts hbgraph and waits until GET /healthz answers 200. extraArgs are
 * added to --listen, --admin-listen, --data-dir and --log-level. Returns
 * { url, base, admin (the admin listener's base: /metrics), gql, gqlData,
 * stop, output }; call stop() when done, also on failure.
 */
export async function startHbgraph(extraArgs = []) {
  const bin = hbgraphBin();
  // A port freed by freePort can be taken again before hbgraph binds it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(bin, extraArgs);
    } catch (err) {
      if (attempt < 3 && err.portTaken) continue;
      throw err;
    }
  }
}

async function startOnce(bin, extraArgs) {
  const port = await freePort();
  let adminPort = await freePort();
  while (adminPort === port) adminPort = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hbgraph-test-'));
  const env = { ...process.env };
  // Flags below win over HBGRAPH_* settings, but others (explain,
  // introspection, limits) would leak in from the caller's environment.
  for (const name of Object.keys(env)) if (name.startsWith('HBGRAPH_')) delete env[name];
  const args = ['--listen', `127.0.0.1:${port}`, '--admin-listen', `127.0.0.1:${adminPort}`, '--data-dir', dataDir, '--log-level', 'warn', ...extraArgs];
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.set(child, dataDir);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-20_000);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let spawnError;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null && !spawnError;

  let stopped;
  const stop = () =>
    (stopped ??= (async () => {
      if (alive()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    })());

  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  for (;;) {
    if (!alive()) {
      await stop();
      const err = new Error(
        `hbgraph (${bin} ${args.join(' ')}) exited before it was healthy: ` +
          `${spawnError?.message ?? `exit code ${child.exitCode}, signal ${child.signalCode}`}\n${output}`,
      );
      err.portTaken = /address already in use/i.test(output);
      throw err;
    }
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`hbgraph did not answer GET /healthz with 200 within ${HEALTH_TIMEOUT_MS} ms\n${output}`);
    }
    await sleep(50);
  }

  const url = `${base}/query`;
  return {
    url,
    base,
    admin: `http://127.0.0.1:${adminPort}`,
    stop,
    output: () => output,
    gql: (query, variables, extensions) => postGraphQL(url, query, variables, extensions),
    gqlData: (query, variables) => graphQLData(url, query, variables),
  };
}

/** POSTs one GraphQL request; returns { status, body }. */
export async function postGraphQL(url, query, variables, extensions) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables, extensions }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${url} answered HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
  return { status: res.status, body };
}

/** POSTs one GraphQL request that must succeed without errors; returns its data. */
export async function graphQLData(url, query, variables) {
  const { status, body } = await postGraphQL(url, query, variables);
  if (status !== 200 || body.errors?.length || !body.data) {
    throw new Error(`GraphQL request failed (HTTP ${status}): ${JSON.stringify(body)}\nquery: ${query}`);
  }
  return body.data;
}
