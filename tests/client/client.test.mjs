// hbgraph through a real client: @apollo/client in Node, HttpLink over fetch,
// paging a RelationshipConnection with fetchMore the way a frontend does,
// with relayStylePagination merging the pages in the cache.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

// First: it sets APOLLO_TELEMETRY_DISABLED before the Apollo packages load.
import { startHbgraph } from '../jslib/hbgraph.mjs';

const { ApolloClient, HttpLink, InMemoryCache, NetworkStatus, gql } = await import('@apollo/client');
const { relayStylePagination } = await import('@apollo/client/utilities');
const { filter, firstValueFrom } = await import('rxjs');

const HUB = 'hub';
const AUTHOR = 'author';
// Followed in this order, so newest first is the reverse.
const FOLLOWEES = Array.from({ length: 23 }, (_, i) => `followee-${String(i).padStart(2, '0')}`);
const NEWEST_FIRST = [...FOLLOWEES].reverse();
const PAGE = 5;

const FOLLOWEES_QUERY = gql`
  query Followees($id: ID!, $first: Int!, $after: String) {
    node(id: $id) {
      id
      relationships(type: "follows", direction: OUTGOING, first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          cursor
          node {
            id
            createdAt
          }
          neighbor {
            id
          }
        }
      }
    }
  }
`;

const ARTICLES_QUERY = gql`
  query Articles($id: ID!) {
    node(id: $id) {
      id
      articles(first: 10) {
        totalCount
        edges {
          node {
            id
            title
            postedAt
          }
        }
      }
    }
  }
`;

let hb;
let client;
const posted = []; // { id, title, postedAt } of AUTHOR's articles, oldest first

before(async () => {
  hb = await startHbgraph();
  const ids = [HUB, AUTHOR, ...FOLLOWEES];
  await hb.gqlData(
    `mutation { ${ids.map((id, i) => `n${i}: createNode(id: ${JSON.stringify(id)}) { id }`).join('\n')} }`,
  );
  // A few milliseconds apart, so "newest first" is exactly one order.
  for (const followee of FOLLOWEES) {
    await hb.gqlData(
      `mutation($s: ID!, $e: ID!) { createRelationship(startNodeId: $s, type: "follows", endNodeId: $e) { id } }`,
      { s: HUB, e: followee },
    );
    await sleep(2);
  }
  for (const [title, category] of [
    ['Hello', 'life'],
    ['Graphs on HBase', 'tech'],
    ['Cursor paging', 'tech'],
    ['Weekend', 'life'],
  ]) {
    const d = await hb.gqlData(
      `mutation($a: ID!, $t: String!, $c: String!) {
        postArticle(authorId: $a, title: $t, body: "text", category: $c) { id title postedAt }
      }`,
      { a: AUTHOR, t: title, c: category },
    );
    posted.push(d.postArticle);
    await sleep(2);
  }

  client = new ApolloClient({
    link: new HttpLink({ uri: hb.url, fetch }),
    cache: new InMemoryCache({
      typePolicies: {
        Node: {
          fields: {
            // One list per (type, direction); first/after pages merge into it.
            relationships: relayStylePagination(['type', 'direction']),
          },
        },
      },
    }),
  });
});

after(async () => {
  client?.stop();
  await hb?.stop();
});

test('fetchMore pages a RelationshipConnection to the end; the cache merges all 23 edges', { timeout: 30_000 }, async () => {
  const observable = client.watchQuery({ query: FOLLOWEES_QUERY, variables: { id: HUB, first: PAGE } });
  const emitted = [];
  const subscription = observable.subscribe({ next: (result) => emitted.push(result) });
  // What a component renders next once nothing is loading: after fetchMore
  // resolves, the merged list comes in a result of its own.
  const settled = async () => {
    const result = await firstValueFrom(
      observable.pipe(filter((r) => r.networkStatus === NetworkStatus.ready || r.error)),
    );
    assert.equal(result.error, undefined);
    return result;
  };
  try {
    let result = await settled();
    const fetchedPages = [result.data.node.relationships.edges];

    while (result.data.node.relationships.pageInfo.hasNextPage) {
      assert.ok(fetchedPages.length < 10, 'hasNextPage never turned false');
      const more = await observable.fetchMore({
        variables: { after: result.data.node.relationships.pageInfo.endCursor },
      });
      assert.equal(more.error, undefined);
      fetchedPages.push(more.data.node.relationships.edges);
      result = await settled();
      // The merged list grows by each page.
      assert.equal(result.data.node.relationships.edges.length, Math.min(fetchedPages.length * PAGE, 23));
    }

    // Every edge came over the wire exactly once, newest first.
    assert.deepEqual(
      fetchedPages.map((page) => page.length),
      [5, 5, 5, 5, 3],
    );
    const fetched = fetchedPages.flat().map((edge) => edge.neighbor.id);
    assert.deepEqual(fetched, NEWEST_FIRST);

    // The watched query's result after the last fetchMore holds them all ...
    const connection = result.data.node.relationships;
    assert.equal(connection.totalCount, 23);
    assert.equal(connection.pageInfo.hasNextPage, false);
    assert.deepEqual(
      connection.edges.map((edge) => edge.neighbor.id),
      NEWEST_FIRST,
    );
    const createdAt = connection.edges.map((edge) => Date.parse(edge.node.createdAt));
    for (let i = 1; i < createdAt.length; i++) assert.ok(createdAt[i - 1] > createdAt[i], 'newest first');
    assert.equal(new Set(connection.edges.map((edge) => edge.cursor)).size, 23);
    assert.deepEqual(
      emitted.at(-1).data.node.relationships.edges.map((edge) => edge.neighbor.id),
      NEWEST_FIRST,
    );

    // ... and so does the cache, read back with the first page's variables.
    const cached = client.readQuery({ query: FOLLOWEES_QUERY, variables: { id: HUB, first: PAGE } });
    assert.deepEqual(
      cached.node.relationships.edges.map((edge) => edge.neighbor.id),
      NEWEST_FIRST,
    );
    assert.equal(cached.node.relationships.totalCount, 23);
  } finally {
    subscription.unsubscribe();
  }
});

test("an author's articles, newest first", async () => {
  const { data, error } = await client.query({ query: ARTICLES_QUERY, variables: { id: AUTHOR } });
  assert.equal(error, undefined);
  const articles = data.node.articles;
  assert.equal(articles.totalCount, 4);
  assert.deepEqual(
    articles.edges.map((edge) => ({ id: edge.node.id, title: edge.node.title, postedAt: edge.node.postedAt })),
    [...posted].reverse(),
  );
  assert.deepEqual(
    articles.edges.map((edge) => edge.node.title),
    ['Weekend', 'Cursor paging', 'Graphs on HBase', 'Hello'],
  );
});
