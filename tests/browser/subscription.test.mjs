// GraphiQL runs a subscription: the page's fetcher sends subscriptions
// over a WebSocket to /query (graphql-transport-ws, the graphql-ws client
// of GraphiQL's own build), an event of a mutation made meanwhile shows in
// the result pane, stopping it closes its socket, and nothing on the way
// trips the page's CSP or logs an error. Run with HBGRAPH_BIN set, as
// `make browser-test` does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { requireEnv, sleep, startChromium, startServer } from './lib.mjs';

const QUERY_EDITOR = '.graphiql-query-editor .CodeMirror';
const VARIABLES_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror';
const RESPONSE = '.graphiql-response .CodeMirror';
const SUBSCRIPTION = `subscription Watch($id: ID!) {
  nodeChanged(id: $id) {
    kind
    id
    node {
      properties
    }
  }
}
`;

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

test('GraphiQL runs a subscription over a WebSocket', { timeout: 120_000 }, async (t) => {
  const bin = requireEnv();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hbgraph-browser-sub-'));
  const dataDir = path.join(tmp, 'data');
  const profileDir = path.join(tmp, 'profile');
  fs.mkdirSync(dataDir);
  fs.mkdirSync(profileDir);
  let browser, chrome, server;
  t.after(async () => {
    try {
      if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5_000)]);
      if (chrome) await chrome.stop('SIGTERM', 5_000);
      if (server) await server.stop('SIGTERM', 25_000);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  server = await startServer(bin, dataDir);
  const origin = server.base;
  await graphql(origin, 'mutation { createNode(id: "ada", properties: {n: 0}) { id } }');

  chrome = await startChromium(profileDir);
  browser = await chromium.connectOverCDP(chrome.ws, { timeout: 30_000 });
  const context = browser.contexts()[0];
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const consoleErrors = [];
  const pageErrors = [];
  const sockets = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('websocket', (ws) => sockets.push(ws));
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  await page.goto(`${origin}/`);

  const typeInto = async (selector, text) => {
    await page.locator(selector).click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText(text);
  };
  await typeInto(QUERY_EDITOR, SUBSCRIPTION);
  await typeInto(VARIABLES_EDITOR, '{"id": "ada"}');
  await sleep(300); // GraphiQL parses the document 100 ms after the last edit
  await page.locator('button.graphiql-execute-button').click();

  // The subscription is registered some time after the click: update the
  // node until an event shows.
  const response = () => page.evaluate((s) => document.querySelector(s).CodeMirror.getValue(), RESPONSE);
  let shown = '';
  for (let n = 1; n <= 60; n++) {
    await graphql(origin, 'mutation($n: Int!) { updateNodeProperties(id: "ada", set: {n: $n}) { id } }', { n });
    await sleep(250);
    shown = await response();
    if (shown.includes('UPDATED')) break;
  }
  const event = JSON.parse(shown);
  assert.equal(event.errors, undefined, shown);
  assert.equal(event.data.nodeChanged.kind, 'UPDATED', shown);
  assert.equal(event.data.nodeChanged.id, 'ada', shown);
  assert.ok(event.data.nodeChanged.node.properties.n >= 1, shown);

  assert.equal(sockets.length, 1, `sockets: ${sockets.map((s) => s.url())}`);
  assert.equal(new URL(sockets[0].url()).host, new URL(origin).host);
  assert.equal(new URL(sockets[0].url()).pathname, '/query');

  // Stop: the button stops the subscription; the client closes its socket.
  const closed = sockets[0].isClosed() ? Promise.resolve() : sockets[0].waitForEvent('close', { timeout: 20_000 });
  await page.locator('button.graphiql-execute-button').click();
  await closed;

  assert.deepEqual(pageErrors, [], 'uncaught page errors');
  assert.deepEqual(consoleErrors, [], 'console errors');
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), [], 'CSP violations');
});
