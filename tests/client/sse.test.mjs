// GraphQL over Server-Sent Events through the npm graphql-sse client
// (distinct connections mode) against hbgraph's /query: an event after a
// mutation, a refused token (401), a refused document as the stream's
// errors, and the end of a subscription when the client disposes of it.

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { startHbgraph } from '../jslib/hbgraph.mjs';

const { createClient } = await import('graphql-sse');

// Hex: random bytes may end in \n or \r, which hbgraph trims off a secret file.
const secret = randomBytes(32).toString('hex');
const dir = mkdtempSync(path.join(tmpdir(), 'hbgraph-sse-'));
const secretFile = path.join(dir, 'secret');
writeFileSync(secretFile, secret);

/** An HS256 token for sub. */
function token(sub) {
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, iat: now - 60, exp: now + 3600 })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const ALICE = token('alice');
let hb;

async function post(query, variables) {
  const res = await fetch(hb.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${ALICE}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.errors, undefined, JSON.stringify(body));
  return body.data;
}

function client(authorization) {
  return createClient({
    url: hb.url,
    headers: authorization ? { Authorization: authorization } : {},
    retryAttempts: 0,
  });
}

/** Waits until the server counts n active subscriptions. */
async function subscribed(n) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await (await fetch(`${hb.admin}/metrics`)).text();
    if (text.includes(`hbgraph_subscriptions_active ${n}\n`)) return;
    assert.ok(Date.now() < deadline, `${n} subscriptions not active after 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const POSTED = `subscription($a: ID!) { articlePosted(authorId: $a) { cursor node { id title } } }`;

before(async () => {
  hb = await startHbgraph(['--auth-hs256-secret-file', secretFile, '--auth-read', 'required']);
  await post(`mutation { createNode(id: "alice") { id } }`);
});

after(async () => {
  await hb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('graphql-sse: an article posted reaches the subscriber; disposing ends the subscription', async () => {
  const c = client(`Bearer ${ALICE}`);
  const events = c.iterate({ query: POSTED, variables: { a: 'alice' } });
  const first = events.next();
  await subscribed(1);
  const { postArticle } = await post(`mutation { postArticle(authorId: "alice", title: "over sse", body: "b", category: "c") { id } }`);
  const { value } = await first;
  assert.equal(value.errors, undefined, JSON.stringify(value));
  assert.equal(value.data.articlePosted.node.id, postArticle.id);
  assert.equal(value.data.articlePosted.node.title, 'over sse');
  await events.return();
  c.dispose();
  await subscribed(0);
});

test('graphql-sse: a refused document arrives as the errors of the stream, a missing token as 401', async () => {
  const c = client(`Bearer ${ALICE}`);
  const got = [];
  for await (const r of c.iterate({ query: `subscription { articlePosted(authorId: "alice") { nope } }` })) got.push(r);
  assert.equal(got.length, 1, JSON.stringify(got));
  assert.equal(got[0].errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED', JSON.stringify(got));
  c.dispose();

  const anonymous = client();
  await assert.rejects(
    async () => {
      for await (const r of anonymous.iterate({ query: POSTED, variables: { a: 'alice' } })) assert.fail(JSON.stringify(r));
    },
    (err) => {
      assert.equal(err?.status ?? err?.response?.status, 401, String(err));
      return true;
    },
  );
  anonymous.dispose();
});
