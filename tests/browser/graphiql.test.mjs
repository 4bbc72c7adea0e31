// hbgraph's GraphiQL page in a real browser: Debian's Chromium, headless,
// driven over CDP by playwright-core (which downloads no browser). The page
// loads with every request going to hbgraph itself, a query and variables
// typed into GraphiQL's editors run from its run button, and the result
// pane shows the node the test wrote.
//
//   HBGRAPH_BIN=/abs/path/to/hbgraph npm test
//
// HBGRAPH_BIN is a built hbgraph binary; the test starts it on 127.0.0.1
// with a temporary data directory and stops it with SIGTERM. It writes a
// screenshot to docs/graphiql.png (or to $HBGRAPH_SCREENSHOT). It fails,
// never skips, when the binary or /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = process.env.HBGRAPH_SCREENSHOT || path.resolve(here, '../../docs/graphiql.png');

// The node the test writes, then reads through GraphiQL. Its properties
// are fixed, and the query asks for no timestamps, so the screenshot comes
// out the same every run.
const NODE_ID = 'ada';
const PROPERTIES = {
  name: 'Ada Lovelace',
  born: 1815,
  languages: ['en', 'fr'],
  analyticalEngine: true,
};
const QUERY = `# Typed by tests/browser into GraphiQL.
query ReadNode($id: ID!) {
  node(id: $id) {
    id
    properties
    name: property(name: "name")
  }
}
`;
const VARIABLES = `{\n  "id": "${NODE_ID}"\n}`;

const QUERY_EDITOR = '.graphiql-query-editor .CodeMirror';
// The variables and the headers editor share a section; the one shown is
// the variables', as the page opens it.
const VARIABLES_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror';
const RESPONSE = '.graphiql-response .CodeMirror';

function requireEnv() {
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// freePort returns a port of 127.0.0.1 that was free a moment ago.
async function freePort() {
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
function proc(cmd, args, { group = false } = {}) {
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
async function startServer(bin, dataDir) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = proc(bin, ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, '--log-level', 'warn']);
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
async function startChromium(profileDir) {
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

async function graphql(base, query, variables) {
  const res = await fetch(`${base}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

// withTimeout bounds a clean-up step, which must not hang the run.
const withTimeout = (promise, ms) => Promise.race([promise, sleep(ms)]);

test('GraphiQL runs a query offline, from hbgraph alone', { timeout: 120_000 }, async (t) => {
  const bin = requireEnv();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hbgraph-browser-'));
  const dataDir = path.join(tmp, 'data');
  const profileDir = path.join(tmp, 'profile');
  fs.mkdirSync(dataDir);
  fs.mkdirSync(profileDir);

  // Clean-up, whatever happens: the browser, then the server, then the
  // temporary directories.
  let browser, chrome, server;
  let serverExit;
  t.after(async () => {
    try {
      if (browser) await withTimeout(browser.close().catch(() => {}), 5_000);
      if (chrome) await chrome.stop('SIGTERM', 5_000);
      if (server && !serverExit) await server.stop('SIGTERM', 25_000);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  server = await startServer(bin, dataDir);
  const origin = server.base;

  const created = await graphql(
    server.base,
    'mutation ($id: ID!, $props: JSON) { createNode(id: $id, properties: $props) { id properties } }',
    { id: NODE_ID, props: PROPERTIES },
  );
  assert.deepEqual(created.createNode, { id: NODE_ID, properties: PROPERTIES });

  chrome = await startChromium(profileDir);
  browser = await chromium.connectOverCDP(chrome.ws, { timeout: 30_000 });
  const context = browser.contexts()[0];
  context.setDefaultTimeout(20_000);

  // Everything the browser asks for, from any page, and all that goes wrong.
  const requests = [];
  const failedRequests = [];
  const consoleErrors = [];
  const pageErrors = [];
  context.on('request', (r) => requests.push(r.url()));
  context.on('requestfailed', (r) => failedRequests.push(`${r.url()}: ${r.failure()?.errorText}`));
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  // CSP violations (a blocked inline style, say) as the page sees them.
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  const editorValue = (sel) => page.evaluate((s) => document.querySelector(s).CodeMirror.getValue(), sel);
  const isQuery = (r, text) => r.url() === `${origin}/query` && (r.request().postData() ?? '').includes(text);

  const introspected = page.waitForResponse((r) => isQuery(r, 'IntrospectionQuery'));
  const res = await page.goto(`${origin}/`, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  const csp = res.headers()['content-security-policy'] ?? '';
  assert.match(csp, /script-src 'self'(;|$)/, `CSP: ${csp}`);

  // GraphiQL is up once its query editor is, and has the schema (for its
  // docs, completion and the explorer) once introspection came back.
  const queryEditor = page.locator(QUERY_EDITOR);
  await queryEditor.waitFor({ state: 'visible' });
  const introspection = await introspected;
  assert.equal(introspection.status(), 200);
  const schema = await introspection.json();
  assert.equal(
    schema.errors,
    undefined,
    `hbgraph refused GraphiQL's introspection query, so GraphiQL has no schema: ${JSON.stringify(schema.errors)}`,
  );
  // A fresh profile opens on the page's example query and its variables.
  assert.match(await editorValue(QUERY_EDITOR), /query Neighborhood\(\$id: ID!/);
  assert.match(await editorValue(VARIABLES_EDITOR), /"id": "alice"/);

  // The explorer plugin is there and shows the schema.
  await page.locator('button[aria-label="Show GraphiQL Explorer"]').click();
  await page.locator('.graphiql-plugin').getByText('relationships', { exact: true }).first().waitFor();
  await page.locator('button[aria-label="Hide GraphiQL Explorer"]').click();
  // The settings dialog adds a <style> element (Radix's scroll lock): it
  // carries the page's style nonce, or the CSP blocks it (checked below).
  await page.locator('button[aria-label="Open settings dialog"]').click();
  await page.getByRole('dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });

  // Replace the query and the variables the way a person does: click into
  // the editor, select all, type. (insertText sends the text as one input,
  // so CodeMirror's bracket closing and completion, which follow key
  // presses, stay out of it.)
  await queryEditor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(QUERY);
  assert.equal(await editorValue(QUERY_EDITOR), QUERY, 'the query editor does not hold what was typed');
  await page.locator(VARIABLES_EDITOR).click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(VARIABLES);
  assert.equal(await editorValue(VARIABLES_EDITOR), VARIABLES, 'the variables editor does not hold what was typed');
  // GraphiQL takes the operation's name from the editor a moment after a
  // change (and sends it with the query): its tab shows it then.
  await page.locator('.graphiql-tab-active').filter({ hasText: 'ReadNode' }).waitFor();

  // Run it with the run button and read the result pane.
  const ran = page.waitForResponse((r) => isQuery(r, 'ReadNode'));
  await page.locator('button.graphiql-execute-button').click();
  const ranRes = await ran;
  assert.equal(ranRes.status(), 200, `running the query: ${await ranRes.text()}`);
  const sent = ranRes.request().postDataJSON();
  assert.deepEqual(
    { query: sent.query, variables: sent.variables, operationName: sent.operationName },
    { query: QUERY, variables: { id: NODE_ID }, operationName: 'ReadNode' },
    'GraphiQL did not send what was typed',
  );
  const resultPane = page.locator(`${RESPONSE} .CodeMirror-code`);
  await resultPane.filter({ hasText: PROPERTIES.name }).waitFor();
  const shown = await resultPane.innerText();
  for (const want of [
    `"id": "${NODE_ID}"`,
    `"name": "${PROPERTIES.name}"`,
    `"born": ${PROPERTIES.born}`,
    '"analyticalEngine": true',
    '"fr"',
  ]) {
    assert.ok(shown.includes(want), `the result pane lacks ${want}:\n${shown}`);
  }
  assert.deepEqual(JSON.parse(await editorValue(RESPONSE)), {
    data: { node: { id: NODE_ID, properties: PROPERTIES, name: PROPERTIES.name } },
  });

  fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: SCREENSHOT, animations: 'disabled', caret: 'hide' });

  // Nothing but hbgraph was asked for anything, and nothing went wrong.
  const checkQuiet = async () => {
    const foreign = requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin);
    assert.deepEqual(foreign, [], `requests to hosts other than ${origin}`);
    assert.deepEqual(failedRequests, [], 'failed requests');
    assert.deepEqual(pageErrors, [], 'uncaught page errors');
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(await page.evaluate(() => window.__cspViolations), [], 'CSP violations');
  };
  assert.ok(
    requests.some((u) => u.startsWith(`${origin}/assets/graphiql-`)),
    `GraphiQL did not come from hbgraph: ${requests.join('\n')}`,
  );
  await checkQuiet();

  // A second visit opens on what the first left, in one tab (once GraphiQL
  // has saved its tabs, which it does a moment after a change).
  await page.waitForFunction(
    ([query, variables]) => {
      const saved = JSON.parse(localStorage.getItem('graphiql:tabState') ?? '{"tabs":[]}');
      return saved.tabs.some((tab) => tab.query === query && tab.variables === variables);
    },
    [QUERY, VARIABLES],
  );
  await page.reload({ waitUntil: 'load' });
  await queryEditor.waitFor({ state: 'visible' });
  assert.equal(await editorValue(QUERY_EDITOR), QUERY);
  assert.equal(await editorValue(VARIABLES_EDITOR), VARIABLES);
  assert.deepEqual(await page.locator('.graphiql-tab').allInnerTexts(), ['ReadNode']);
  await checkQuiet();

  await withTimeout(browser.close().catch(() => {}), 5_000);
  await chrome.stop('SIGTERM', 5_000);
  serverExit = await server.stop('SIGTERM', 25_000);
  assert.deepEqual(serverExit, { code: 0, signal: null }, `hbgraph did not exit cleanly:\n${server.output()}`);
});
