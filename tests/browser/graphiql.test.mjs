// hbgraph's GraphiQL page in a real browser: Debian's Chromium, headless,
// driven over CDP by playwright-core (which downloads no browser), used as
// a person uses it: clicks and keys, never by setting an editor's value.
// With every request going to hbgraph itself and no console error, the
// page opens on its example and runs it; typed variables survive a reload;
// a query typed or pasted over a named one runs at once (GraphiQL 4.1.2
// used to send the old operation's name: "operation Neighborhood not
// found"); of two operations, Ctrl-Enter runs the one under the cursor and
// the run button's picker the one picked; two tabs survive a reload; the
// Docs pane shows Node; the explorer builds a query that runs.
//
//   HBGRAPH_BIN=/abs/path/to/hbgraph npm test
//
// HBGRAPH_BIN is a built hbgraph binary; the test starts it on 127.0.0.1
// with a temporary data directory and --example-data, checks that the
// example shows alice's neighbourhood, and stops it with SIGTERM. It writes a screenshot of the example's result to
// docs/graphiql.png (or to $HBGRAPH_SCREENSHOT). It fails, never skips,
// when the binary or /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { requireEnv, sleep, startChromium, startServer } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
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

test('GraphiQL works offline, from hbgraph alone, as a person uses it', { timeout: 240_000 }, async (t) => {
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

  server = await startServer(bin, dataDir, ['--example-data']);
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

  // Nothing but hbgraph was asked for anything, and nothing went wrong.
  const checkQuiet = async (when) => {
    const foreign = requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin);
    assert.deepEqual(foreign, [], `${when}: requests to hosts other than ${origin}`);
    assert.deepEqual(failedRequests, [], `${when}: failed requests`);
    assert.deepEqual(pageErrors, [], `${when}: uncaught page errors`);
    assert.deepEqual(consoleErrors, [], `${when}: console errors`);
    assert.deepEqual(await page.evaluate(() => window.__cspViolations), [], `${when}: CSP violations`);
  };

  const editorValue = (sel) => page.evaluate((s) => document.querySelector(s).CodeMirror.getValue(), sel);
  const queryEditor = page.locator(QUERY_EDITOR);
  const variablesEditor = page.locator(VARIABLES_EDITOR);
  const runButton = page.locator('button.graphiql-execute-button');
  const tabTitles = () => page.locator('.graphiql-tab').allInnerTexts();

  // typeInto replaces an editor's text the way a person does: click into
  // it, select all, type. A one-line text is typed key by key (with
  // CodeMirror's bracket closing and completion reacting to each key, as
  // they do to a person's), unless paste is set; a longer one arrives as
  // one input, as from a paste or an input method.
  const typeInto = async (editor, text, { paste = false } = {}) => {
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    if (paste || text.includes('\n')) await page.keyboard.insertText(text);
    else await page.keyboard.type(text);
  };
  // run does what start does (a click, keys) and returns what GraphiQL
  // sent and what hbgraph answered, once the result pane shows it. It
  // fails unless hbgraph answered 200 without errors.
  const run = async (what, start) => {
    const answered = page.waitForResponse(
      (r) => r.url() === `${origin}/query` && !(r.request().postData() ?? '').includes('IntrospectionQuery'),
    );
    await start();
    // When nothing is sent, say what GraphiQL showed: its query and what
    // its execute button offered.
    const res = await answered.catch(async (err) => {
      const query = await editorValue(QUERY_EDITOR).catch(() => '?');
      const button = await runButton.getAttribute('aria-label').catch(() => '?');
      const menu = await page.locator('[role="menu"]').count().catch(() => '?');
      throw new Error(`${what}: GraphiQL sent nothing (${err.message}); query ${JSON.stringify(query)}, button ${JSON.stringify(button)}, open menus ${menu}`);
    });
    const text = await res.text();
    const sent = res.request().postDataJSON();
    assert.equal(res.status(), 200, `${what}: GraphiQL sent ${JSON.stringify(sent)}, hbgraph answered ${text}`);
    const body = JSON.parse(text);
    assert.equal(body.errors, undefined, `${what}: ${text}`);
    await page.waitForFunction(
      ([sel, want]) => {
        try {
          return JSON.stringify(JSON.parse(document.querySelector(sel).CodeMirror.getValue())) === want;
        } catch {
          return false;
        }
      },
      [RESPONSE, JSON.stringify(body)],
    );
    return { sent, body };
  };
  const click = (locator) => () => locator.click();
  // clickAt returns a click at the middle of where locator is now: a click
  // without the wait for the element to be still that locator.click()
  // does, as fast as a person's click right after a paste.
  const clickAt = async (locator) => {
    const box = await locator.boundingBox();
    return () => page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  };
  const press = (keys) => () => page.keyboard.press(keys);
  // savedTabs waits until GraphiQL has saved tabs that satisfy want (it
  // saves a moment after a change).
  const savedTabs = async (what, want) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const saved = JSON.parse(
        (await page.evaluate(() => localStorage.getItem('graphiql:tabState'))) ?? '{"tabs":[]}',
      );
      if (want(saved)) return;
      if (Date.now() > deadline) assert.fail(`${what}: GraphiQL did not save its tabs: ${JSON.stringify(saved)}`);
      await sleep(50);
    }
  };
  const reload = async () => {
    const introspected = page.waitForResponse((r) => (r.request().postData() ?? '').includes('IntrospectionQuery'));
    await page.reload({ waitUntil: 'load' });
    await queryEditor.waitFor({ state: 'visible' });
    await introspected;
  };

  // 1. A fresh profile opens on the page's example query and its variables,
  // and GraphiQL has the schema (for docs, completion and the explorer)
  // once its introspection came back.
  const introspected = page.waitForResponse((r) => (r.request().postData() ?? '').includes('IntrospectionQuery'));
  const res = await page.goto(`${origin}/`, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  const csp = res.headers()['content-security-policy'] ?? '';
  assert.match(csp, /script-src 'self'(;|$)/, `CSP: ${csp}`);
  await queryEditor.waitFor({ state: 'visible' });
  const introspection = await introspected;
  assert.equal(introspection.status(), 200);
  const schema = await introspection.json();
  assert.equal(
    schema.errors,
    undefined,
    `hbgraph refused GraphiQL's introspection query, so GraphiQL has no schema: ${JSON.stringify(schema.errors)}`,
  );
  const example = await page.locator('#graphiql').getAttribute('data-default-query');
  assert.match(example, /query Neighborhood\(\$id: ID!/);
  assert.equal(await editorValue(QUERY_EDITOR), example);
  assert.match(await editorValue(VARIABLES_EDITOR), /"id": "alice"/);
  assert.deepEqual(await tabTitles(), ['Neighborhood']);

  // 2. The example runs as it opens, from the run button: with the example
  // data, on alice's neighbourhood.
  const ranExample = await run('the example', click(runButton));
  assert.equal(ranExample.sent.operationName, 'Neighborhood');
  const alice = ranExample.body.data.node;
  assert.equal(alice?.properties?.name, 'Alice Archer', JSON.stringify(ranExample.body));
  assert.ok(alice.following.totalCount > 0 && alice.following.edges.length > 0, JSON.stringify(alice));
  assert.ok(
    alice.following.edges.some((e) => e.neighbor.articles.edges.length > 0),
    `no articles among whom alice follows: ${JSON.stringify(alice)}`,
  );
  assert.ok(alice.wordCounts.length > 0, JSON.stringify(alice));
  await page.locator(`${RESPONSE} .CodeMirror-code`).filter({ hasText: 'Alice Archer' }).waitFor();
  await screenshot(page);

  // 3. The explorer plugin opens on the schema; the settings dialog adds a
  // <style> element (Radix's scroll lock): it carries the page's style
  // nonce, or the CSP blocks it (checkQuiet).
  await page.locator('button[aria-label="Show GraphiQL Explorer"]').click();
  await page.locator('.graphiql-plugin').getByText('relationships', { exact: true }).first().waitFor();
  await page.locator('button[aria-label="Hide GraphiQL Explorer"]').click();
  await page.locator('button[aria-label="Open settings dialog"]').click();
  await page.getByRole('dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await checkQuiet('the example');

  // 4. Edit the example's variables, reload: the example comes back with
  // the variables as typed, in one tab, and runs on them.
  const BOB = '{"id": "bob"}';
  await typeInto(variablesEditor, BOB);
  assert.equal(await editorValue(VARIABLES_EDITOR), BOB, 'the variables editor does not hold what was typed');
  await savedTabs('variables typed', (s) => s.tabs.some((tab) => tab.variables === BOB));
  await reload();
  assert.equal(await editorValue(QUERY_EDITOR), example);
  assert.equal(await editorValue(VARIABLES_EDITOR), BOB, 'the example was forced back over the variables typed');
  assert.deepEqual(await tabTitles(), ['Neighborhood']);
  const ranBob = await run('the example on bob', click(runButton));
  assert.deepEqual(ranBob.sent.variables, { id: 'bob' });
  assert.equal(ranBob.body.data.node?.properties?.name, 'Bob Brandt', JSON.stringify(ranBob.body));
  await checkQuiet('variables kept over a reload');

  // 5. The newcomer: replace the example with an anonymous query
  // and run it at once, with the run button. (GraphiQL 4.1.2 takes 100 ms
  // to notice the document changed, and used to send the example's
  // operation name with it: "operation Neighborhood not found".)
  const ANONYMOUS = `{ node(id: "${NODE_ID}") { id properties } }`;
  await typeInto(queryEditor, ANONYMOUS);
  const ranAnonymous = await run('an anonymous query typed over the example', click(runButton));
  assert.equal(ranAnonymous.sent.query, ANONYMOUS, 'the query editor does not hold what was typed');
  assert.equal(ranAnonymous.sent.operationName ?? null, null);
  assert.deepEqual(ranAnonymous.body, { data: { node: { id: NODE_ID, properties: PROPERTIES } } });
  await checkQuiet('an anonymous query');

  // 6. A named query with variables, both typed, run from the run button
  // once GraphiQL shows the operation's name on its tab.
  await typeInto(queryEditor, QUERY);
  assert.equal(await editorValue(QUERY_EDITOR), QUERY, 'the query editor does not hold what was typed');
  await typeInto(variablesEditor, VARIABLES);
  assert.equal(await editorValue(VARIABLES_EDITOR), VARIABLES, 'the variables editor does not hold what was typed');
  await page.locator('.graphiql-tab-active').filter({ hasText: 'ReadNode' }).waitFor();
  const ranNamed = await run('a named query', click(runButton));
  assert.deepEqual(
    { query: ranNamed.sent.query, variables: ranNamed.sent.variables, operationName: ranNamed.sent.operationName },
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
  assert.deepEqual(ranNamed.body, { data: { node: { id: NODE_ID, properties: PROPERTIES, name: PROPERTIES.name } } });

  // 7. An anonymous query pasted over the named one and run at once from
  // the run button: within GraphiQL's 100 ms, which sent the old name with
  // it. (Ctrl-Enter at once is step 8's first run.)
  const NAME_ONLY = `{ node(id: "${NODE_ID}") { name: property(name: "name") } }`;
  const clickRun = await clickAt(runButton);
  await typeInto(queryEditor, NAME_ONLY, { paste: true });
  const ranAtOnce = await run('an anonymous query pasted over a named one, run at once', clickRun);
  assert.equal(ranAtOnce.sent.query, NAME_ONLY);
  assert.equal(ranAtOnce.sent.operationName ?? null, null);
  assert.deepEqual(ranAtOnce.body, { data: { node: { name: PROPERTIES.name } } });

  // 8. Two named operations: Ctrl-Enter runs the one under the cursor
  // (GraphiQL's rule), at once and after GraphiQL caught up; the run
  // button offers both and runs the one picked.
  const TWO = `query First { node(id: "${NODE_ID}") { id } }\nquery Second { node(id: "${NODE_ID}") { name: property(name: "name") } }`;
  const FIRST = { data: { node: { id: NODE_ID } } };
  const SECOND = { data: { node: { name: PROPERTIES.name } } };
  await typeInto(queryEditor, TWO); // the cursor ends in Second
  let ran = await run('two operations, cursor in the second, Ctrl-Enter at once', press('Control+Enter'));
  assert.deepEqual([ran.sent.operationName, ran.body], ['Second', SECOND]);
  await page.waitForFunction((sel) => {
    const cm = document.querySelector(sel).CodeMirror;
    return cm.operations?.length === 2;
  }, QUERY_EDITOR);
  ran = await run('two operations, cursor in the second, Ctrl-Enter', press('Control+Enter'));
  assert.deepEqual([ran.sent.operationName, ran.body], ['Second', SECOND]);
  await queryEditor.locator('.CodeMirror-code .CodeMirror-line').first().click();
  ran = await run('two operations, cursor in the first, Ctrl-Enter', press('Control+Enter'));
  assert.deepEqual([ran.sent.operationName, ran.body], ['First', FIRST]);
  await runButton.click();
  ran = await run('two operations, Second picked', click(page.getByRole('menuitem', { name: 'Second' })));
  assert.deepEqual([ran.sent.operationName, ran.body], ['Second', SECOND]);
  await runButton.click();
  ran = await run('two operations, First picked', click(page.getByRole('menuitem', { name: 'First' })));
  assert.deepEqual([ran.sent.operationName, ran.body], ['First', FIRST]);
  await checkQuiet('two operations');

  // 9. A second tab, with a query and variables of its own.
  await page.locator('button[aria-label="New tab"]').click();
  await page.locator('.graphiql-tab').nth(1).waitFor();
  const WHO = 'query Who($who: ID!) { node(id: $who) { name: property(name: "name") } }';
  const WHO_VARIABLES = `{"who": "${NODE_ID}"}`;
  await typeInto(queryEditor, WHO);
  await typeInto(variablesEditor, WHO_VARIABLES);
  assert.equal(await editorValue(QUERY_EDITOR), WHO);
  assert.equal(await editorValue(VARIABLES_EDITOR), WHO_VARIABLES);
  ran = await run('the second tab', click(runButton));
  assert.deepEqual([ran.sent.operationName, ran.sent.variables, ran.body], ['Who', { who: NODE_ID }, SECOND]);

  // 10. Reload: both tabs come back as left, the second active; no example.
  await savedTabs(
    'two tabs',
    (s) =>
      s.tabs.length === 2 &&
      s.activeTabIndex === 1 &&
      s.tabs[0].query?.startsWith('query First') &&
      s.tabs[1].query?.startsWith('query Who') &&
      s.tabs[1].variables === WHO_VARIABLES,
  );
  await reload();
  assert.equal((await tabTitles()).length, 2, `tabs after reload: ${await tabTitles()}`);
  assert.equal(await editorValue(QUERY_EDITOR), WHO);
  assert.equal(await editorValue(VARIABLES_EDITOR), WHO_VARIABLES);
  await page.locator('.graphiql-tab').first().locator('button').first().click();
  await page.waitForFunction(([sel, want]) => document.querySelector(sel).CodeMirror.getValue() === want, [
    QUERY_EDITOR,
    TWO,
  ]);
  assert.equal(await editorValue(VARIABLES_EDITOR), VARIABLES);
  await queryEditor.locator('.CodeMirror-code .CodeMirror-line').first().click();
  ran = await run('the first tab after a reload', press('Control+Enter'));
  assert.deepEqual([ran.sent.operationName, ran.body], ['First', FIRST]);
  await checkQuiet('two tabs over a reload');

  // 11. The Docs pane opens on the schema and shows Node.
  await page.locator('button[aria-label="Show Documentation Explorer"]').click();
  const docs = page.locator('.graphiql-doc-explorer');
  await docs.getByText('All Schema Types').waitFor();
  await docs.getByRole('link', { name: 'Node', exact: true }).first().click();
  await page.locator('.graphiql-doc-explorer-title').filter({ hasText: /^Node$/ }).waitFor();
  await docs.getByText('relationships', { exact: true }).first().waitFor();
  await page.locator('button[aria-label="Hide Documentation Explorer"]').click();

  // 12. In a new tab, the explorer builds a query by clicks and typing,
  // and it runs.
  await page.locator('button[aria-label="New tab"]').click();
  await page.locator('.graphiql-tab').nth(2).waitFor();
  await page.locator('button[aria-label="Show GraphiQL Explorer"]').click();
  const explorer = page.locator('.graphiql-plugin');
  await explorer.locator('[data-field-name="node"]').first().click();
  // Expanded, node shows its argument, then Node's fields (the only id
  // and properties fields in view: Query has none).
  await explorer.locator('[data-arg-name="id"] input').click();
  await page.keyboard.type(NODE_ID);
  await explorer.locator('[data-field-name="id"]').click();
  await explorer.locator('[data-field-name="properties"]').click();
  await page.waitForFunction(
    ([sel, id]) => /node\(id: "([^"]*)"\)\s*\{\s*id\s+properties\s*\}/.exec(document.querySelector(sel).CodeMirror.getValue())?.[1] === id,
    [QUERY_EDITOR, NODE_ID],
  );
  // A click that lands while the explorer is still re-rendering the
  // editor is sometimes dropped by GraphiQL (seen about one run in three on
  // a loaded machine): a person clicks again, and so does the test, once,
  // if nothing was sent within 5 s.
  ran = await run('the explorer', async () => {
    const sent = page
      .waitForRequest((r) => r.url() === `${origin}/query` && !(r.postData() ?? '').includes('IntrospectionQuery'), { timeout: 5000 })
      .then(() => true, () => false);
    await runButton.click();
    if (!(await sent)) await runButton.click();
  });
  assert.deepEqual(ran.body, { data: { node: { id: NODE_ID, properties: PROPERTIES } } });
  await page.locator('button[aria-label="Hide GraphiQL Explorer"]').click();

  assert.ok(
    requests.some((u) => u.startsWith(`${origin}/assets/graphiql-`)),
    `GraphiQL did not come from hbgraph: ${requests.join('\n')}`,
  );
  await checkQuiet('docs and explorer');

  await withTimeout(browser.close().catch(() => {}), 5_000);
  await chrome.stop('SIGTERM', 5_000);
  serverExit = await server.stop('SIGTERM', 25_000);
  assert.deepEqual(serverExit, { code: 0, signal: null }, `hbgraph did not exit cleanly:\n${server.output()}`);
});

// screenshot writes the page to SCREENSHOT, the same every run.
async function screenshot(page) {
  fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: SCREENSHOT, animations: 'disabled', caret: 'hide' });
}
