// CORS in a real browser: a page on a second loopback origin calls
// hbgraph's /query with fetch. When hbgraph lists the page's origin
// (--cors-origins) the call, and its preflight (an Authorization header),
// goes through; from an origin it does not list, the browser refuses the
// answer. Run with HBGRAPH_BIN set, as `make browser-test` does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { freePort, requireEnv, startChromium, startServer } from './lib.mjs';

test('a page on another origin calls hbgraph only when its origin is listed', { timeout: 120_000 }, async (t) => {
  const bin = requireEnv();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hbgraph-cors-'));
  const dataDir = path.join(tmp, 'data');
  const profileDir = path.join(tmp, 'profile');
  fs.mkdirSync(dataDir);
  fs.mkdirSync(profileDir);

  // The app: an empty page, on 127.0.0.1 (listed) and on localhost (the
  // same port, another origin, not listed).
  const app = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>app</title>');
  });
  const appPort = await freePort();
  app.listen(appPort, '127.0.0.1');
  await once(app, 'listening');
  const listed = `http://127.0.0.1:${appPort}`;
  const unlisted = `http://localhost:${appPort}`;

  let browser, chrome, server;
  t.after(async () => {
    try {
      if (browser) await browser.close().catch(() => {});
      if (chrome) await chrome.stop('SIGTERM', 5_000);
      if (server) await server.stop('SIGTERM', 25_000);
      app.close();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  server = await startServer(bin, dataDir, ['--cors-origins', listed]);
  chrome = await startChromium(profileDir);
  browser = await chromium.connectOverCDP(chrome.ws, { timeout: 30_000 });
  const page = await browser.contexts()[0].newPage();

  const call = (url) =>
    page.evaluate(async (url) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer not-checked-yet' },
          body: JSON.stringify({ query: '{ __typename }' }),
        });
        return { status: res.status, body: await res.text(), requestId: res.headers.get('x-request-id') };
      } catch (err) {
        return { error: String(err) };
      }
    }, url);

  await page.goto(`${listed}/`);
  const ok = await call(`${server.base}/query`);
  assert.equal(ok.error, undefined, `from ${listed}: ${ok.error}`);
  assert.equal(ok.status, 200);
  assert.deepEqual(JSON.parse(ok.body), { data: { __typename: 'Query' } });
  assert.ok(ok.requestId, 'X-Request-Id is exposed to the listed origin');

  await page.goto(`${unlisted}/`);
  const refused = await call(`${server.base}/query`);
  assert.match(refused.error ?? '', /TypeError|Failed to fetch/, `from ${unlisted}: ${JSON.stringify(refused)}`);
});
