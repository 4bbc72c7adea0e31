// Live updates through real clients: the npm graphql-ws client (the
// graphql-transport-ws protocol) and Apollo Client's GraphQLWsLink over
// it, against hbgraph's /query: subscribe, receive an event after a
// mutation, reconnect and catch up by the event's cursor, a refused
// token (4401), the cap on subscriptions per connection, and a home
// feed's subscription (articlePosted(feedOf:)).

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

// First: it sets APOLLO_TELEMETRY_DISABLED before the Apollo packages load.
import { startHbgraph } from '../jslib/hbgraph.mjs';

const { createClient } = await import('graphql-ws');
const { default: WebSocket } = await import('ws');
const { ApolloClient, InMemoryCache, gql } = await import('@apollo/client');
const { GraphQLWsLink } = await import('@apollo/client/link/subscriptions');

// Hex: random bytes may end in \n or \r, which hbgraph trims off a secret file.
const secret = randomBytes(32).toString('hex');
const dir = mkdtempSync(path.join(tmpdir(), 'hbgraph-subs-'));
const secretFile = path.join(dir, 'secret');
writeFileSync(secretFile, secret);

/** An HS256 token for sub, valid for seconds. */
function token(sub, seconds = 3600) {
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, iat: now - 60, exp: now + seconds })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const ALICE = token('alice');
let hb;
let wsUrl;

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

function client(authorization, extra = {}) {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { Authorization: authorization } : undefined,
    retryAttempts: 0,
    lazy: true,
    ...extra,
  });
}

/** Subscribes and returns { next(): Promise<result>, error: Promise, dispose }. */
function subscribe(c, query, variables) {
  const queue = [];
  const waiters = [];
  let fail;
  const error = new Promise((resolve) => (fail = resolve));
  const dispose = c.subscribe(
    { query, variables },
    {
      next: (v) => (waiters.length ? waiters.shift()(v) : queue.push(v)),
      error: (e) => fail(e),
      complete: () => {},
    },
  );
  return {
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiters.push(resolve))),
    error,
    dispose,
  };
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
  hb = await startHbgraph(['--auth-hs256-secret-file', secretFile, '--subscriptions-per-connection', '2']);
  wsUrl = hb.url.replace('http://', 'ws://');
  await post(`mutation { createNode(id: "alice") { id } }`);
});

after(async () => {
  await hb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('graphql-ws: an article posted reaches the subscriber with its cursor; a reconnect catches up by it', async () => {
  const c = client(`Bearer ${ALICE}`);
  const sub = subscribe(c, POSTED, { a: 'alice' });
  await subscribed(1);
  const { postArticle } = await post(`mutation { postArticle(authorId: "alice", title: "first", body: "b", category: "c") { id } }`);
  const ev = await sub.next();
  assert.equal(ev.data.articlePosted.node.id, postArticle.id);
  assert.equal(ev.data.articlePosted.node.title, 'first');
  const page = await post(`{ node(id: "alice") { articles(first: 1) { edges { cursor } } } }`);
  assert.equal(ev.data.articlePosted.cursor, page.node.articles.edges[0].cursor);

  // Offline while two more are posted; back, it asks for what is newer
  // than the last cursor it saw.
  sub.dispose();
  await c.dispose();
  await subscribed(0);
  await post(`mutation { postArticle(authorId: "alice", title: "second", body: "b", category: "c") { id } }`);
  await post(`mutation { postArticle(authorId: "alice", title: "third", body: "b", category: "c") { id } }`);
  const again = client(`Bearer ${ALICE}`);
  const missed = await post(`query($c: String!) { node(id: "alice") { articles(last: 20, before: $c) { edges { node { title } } } } }`, {
    c: ev.data.articlePosted.cursor,
  });
  assert.deepEqual(missed.node.articles.edges.map((e) => e.node.title), ['third', 'second']);
  const resumed = subscribe(again, POSTED, { a: 'alice' });
  await subscribed(1);
  await post(`mutation { postArticle(authorId: "alice", title: "fourth", body: "b", category: "c") { id } }`);
  assert.equal((await resumed.next()).data.articlePosted.node.title, 'fourth');
  resumed.dispose();
  await again.dispose();
  await subscribed(0);
});

test('graphql-ws: a token that does not verify closes the socket with 4401', async () => {
  let closed;
  const closedWith = new Promise((resolve) => (closed = resolve));
  const c = client(`Bearer ${ALICE}x`, { on: { closed: (e) => closed(e) } });
  const sub = subscribe(c, POSTED, { a: 'alice' });
  const event = await closedWith;
  assert.equal(event.code, 4401);
  assert.match(event.reason, /unauthenticated/);
  await sub.error;
  await c.dispose();
});

test('graphql-ws: past the cap per connection a subscription is refused with RATE_LIMITED', async () => {
  const c = client(`Bearer ${ALICE}`);
  const a = subscribe(c, POSTED, { a: 'alice' });
  const b = subscribe(c, POSTED, { a: 'alice' });
  await subscribed(2);
  const third = subscribe(c, POSTED, { a: 'alice' });
  const ev = await Promise.race([third.next(), third.error]);
  const errors = ev.errors ?? ev;
  assert.equal(errors[0].extensions.code, 'RATE_LIMITED', JSON.stringify(ev));
  a.dispose();
  b.dispose();
  await c.dispose();
  await subscribed(0);
});

test("Apollo Client's GraphQLWsLink receives the events of a subscription", async () => {
  const c = client(`Bearer ${ALICE}`);
  const apollo = new ApolloClient({ link: new GraphQLWsLink(c), cache: new InMemoryCache() });
  const got = new Promise((resolve, reject) => {
    const s = apollo.subscribe({ query: gql(POSTED), variables: { a: 'alice' } }).subscribe({
      next: (r) => {
        s.unsubscribe();
        resolve(r);
      },
      error: reject,
    });
  });
  await subscribed(1);
  await post(`mutation { postArticle(authorId: "alice", title: "via apollo", body: "b", category: "c") { id } }`);
  const r = await got;
  assert.equal(r.data.articlePosted.node.title, 'via apollo');
  await c.dispose();
  apollo.stop();
});

test('graphql-ws: articlePosted(feedOf:) delivers a followed author\'s post with its cursor in Node.feed', async () => {
  await post(`mutation { createNode(id: "bob") { id } }`);
  await post(`mutation { createRelationship(startNodeId: "alice", type: "follows", endNodeId: "bob") { id } }`);
  const c = client(`Bearer ${ALICE}`);
  const sub = subscribe(c, `subscription($r: ID!) { articlePosted(feedOf: $r) { cursor node { title author { id } } } }`, { r: 'alice' });
  await subscribed(1);
  await post(`mutation { postArticle(authorId: "bob", title: "for alice's feed", body: "b", category: "c") { id } }`);
  const ev = await sub.next();
  assert.equal(ev.data.articlePosted.node.title, "for alice's feed");
  assert.equal(ev.data.articlePosted.node.author.id, 'bob');
  const page = await post(`{ node(id: "alice") { feed(first: 1) { edges { cursor } } } }`);
  assert.equal(ev.data.articlePosted.cursor, page.node.feed.edges[0].cursor);
  sub.dispose();
  await c.dispose();
  await subscribed(0);
});
