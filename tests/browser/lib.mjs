// Helpers of the browser tests: hbgraph and Debian's Chromium as child
// processes on free loopback ports.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

export function requireEnv() {
  const bin = process.env.HBGRAPH_BIN;
  assert.ok(
    bin,
    'HBGRAPH_BIN is not set: build hbgraph (go build -o /tmp/hbgraph-bin .) and run with HBGRAPH_BIN=/tmp/hbgraph-bin',
  );
  assert.ok(path.isAbsolute(bin), `HBGRAPH_BIN must be an absolute path, got ${bin}`);
  try {
    fs.accessSync(bin, fs.constants.X_OK);
  } catch (err) {
    assert.fail(`HBGRAPH_BIN=${bin} is not an executable file: ${err.message}`);
  }
  try {
    fs.accessSync(CHROMIUM, fs.constants.X_OK);
  } catch {
    assert.fail(`chromium is missing: ${CHROMIUM} does not exist or is not executable; install Debian's: apt-get install -y chromium`);
  }
  return bin;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// freePort returns a port of 127.0.0.1 that was free a moment ago.
export async function freePort() {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

// proc runs a child process, keeps its output, and stops it: signal, then
// SIGKILL after graceMs. With group set, the signals go to its process group.
export function proc(cmd, args, { group = false } = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  let output = '';
  child.stdout.on('data', (b) => (output += b));
  child.stderr.on('data', (b) => (output += b));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const kill = (sig) => {
    try {
      if (group) process.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // already gone
    }
  };
  return {
    child,
    exited,
    alive,
    output: () => output,
    async stop(signal, graceMs) {
      if (!alive()) return exited;
      kill(signal);
      const timer = setTimeout(() => kill('SIGKILL'), graceMs);
      const res = await exited;
      clearTimeout(timer);
      if (group) kill('SIGKILL'); // anything of the group still around
      return res;
    },
  };
}

// startServer starts hbgraph on a free port and waits until /healthz answers.
export async function startServer(bin, dataDir, flags = []) {
  const port = await freePort();
  let adminPort = await freePort();
  while (adminPort === port) adminPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = proc(bin, ['--listen', `127.0.0.1:${port}`, '--admin-listen', `127.0.0.1:${adminPort}`, '--data-dir', dataDir, '--log-level', 'warn', ...flags]);
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (!p.alive()) {
      const { code, signal } = await p.exited;
      throw new Error(`hbgraph exited before it was healthy (code ${code}, signal ${signal}):\n${p.output()}`);
    }
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return { ...p, base };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await p.stop('SIGKILL', 0);
      throw new Error(`hbgraph not healthy after 15 s:\n${p.output()}`);
    }
    await sleep(50);
  }
}

// startChromium starts Debian's Chromium headless on a fresh profile and
// returns it with the DevTools endpoint it listens on (on 127.0.0.1).
export async function startChromium(profileDir) {
  const p = proc(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--no-default-browser-check',
      '--disable-default-apps',
      '--disable-extensions',
      '--mute-audio',
      '--hide-scrollbars',
      '--force-device-scale-factor=1',
      '--window-size=1280,800',
      `--user-data-dir=${profileDir}`,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { group: true },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /DevTools listening on (ws:\/\/\S+)/.exec(p.output());
    if (m) return { ...p, ws: m[1] };
    if (!p.alive() || Date.now() > deadline) {
      await p.stop('SIGKILL', 0);
      throw new Error(`chromium did not start:\n${p.output()}`);
    }
    await sleep(50);
  }
}

