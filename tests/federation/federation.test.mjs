// hbgraph as a federation v2 subgraph: behind @apollo/gateway
// (IntrospectAndCompose) next to "social", an @apollo/subgraph service that
// extends hbgraph's Node and returns references to hbgraph's entities.
// Everything listens on 127.0.0.1.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

// First: it sets APOLLO_TELEMETRY_DISABLED before the Apollo packages load.
import { freePort, postGraphQL, startHbgraph } from '../jslib/hbgraph.mjs';
import { startSocial } from './lib/social.mjs';

const { ApolloServer } = await import('@apollo/server');
const { startStandaloneServer } = await import('@apollo/server/standalone');
const { ApolloGateway, IntrospectAndCompose, RemoteGraphQLDataSource } = await import('@apollo/gateway');
const { composeServices } = await import('@apollo/composition');
const { parse } = await import('graphql');

// GraphQLDataSourceRequestKind.INCOMING_OPERATION (the enum is not exported):
// a request made to answer a client, not to load a schema.
const INCOMING_OPERATION = 'incoming operation';

/** Every request the gateway sends to a subgraph, in order. */
const sent = [];

/** Records each request before the gateway sends it. */
class RecordingDataSource extends RemoteGraphQLDataSource {
  willSendRequest({ request, kind }) {
    // variables as they go over the wire (the gateway's own objects have no prototype)
    const variables = JSON.parse(JSON.stringify(request.variables ?? {}));
    sent.push({ subgraph: this.name, kind, query: request.query, variables });
  }
}

/** The query-time requests the gateway sent to one subgraph (not schema loading). */
const sentTo = (subgraph) => sent.filter((r) => r.subgraph === subgraph && r.kind === INCOMING_OPERATION);

let hb; // hbgraph
let social;
let gatewayServer;
let gatewayUrl;
const ids = {}; // ids hbgraph handed out while seeding

/** The sum of hbgraph's own hbgraph_requests_total counter (all statuses). */
async function hbgraphRequestsTotal() {
  const text = await (await fetch(`${hb.admin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('hbgraph_requests_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function viaGateway(query, variables) {
  const { status, body } = await postGraphQL(gatewayUrl, query, variables);
  assert.equal(status, 200, `gateway answered HTTP ${status}: ${JSON.stringify(body)}`);
  assert.equal(body.errors, undefined, `gateway returned errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}

before(async () => {
  // @apollo/gateway refuses supergraphs with @authenticated (a SECURITY
  // feature only Apollo Router implements). hbgraph, run as a newcomer runs
  // it (no authentication, no flag), leaves the directives out.
  hb = await startHbgraph();

  // Seed through hbgraph's own mutations. Relationships and articles are
  // created a few milliseconds apart so "newest first" is one order.
  await hb.gqlData(`mutation {
    alice: createNode(id: "alice", properties: {name: "Alice", city: "Tokyo"}) { id }
    bob: createNode(id: "bob", properties: {name: "Bob"}) { id }
    carol: createNode(id: "carol", properties: {name: "Carol", tags: ["a", "b"]}) { id }
    dave: createNode(id: "dave", properties: {}) { id }
  }`);
  const follows = [
    ['alice', 'bob'],
    ['alice', 'carol'],
    ['alice', 'dave'],
    ['bob', 'carol'],
    ['carol', 'alice'],
  ];
  for (const [start, end] of follows) {
    const d = await hb.gqlData(
      `mutation($s: ID!, $e: ID!) {
        createRelationship(startNodeId: $s, type: "follows", endNodeId: $e, properties: {since: 2021}) { id }
      }`,
      { s: start, e: end },
    );
    ids[`${start}->${end}`] = d.createRelationship.id;
    await sleep(3);
  }
  const post = async (author, title, category) => {
    const d = await hb.gqlData(
      `mutation($a: ID!, $t: String!, $b: String!, $c: String!) {
        postArticle(authorId: $a, title: $t, body: $b, category: $c) { id postedAt }
      }`,
      { a: author, t: title, b: `body of ${title}`, c: category },
    );
    await sleep(3);
    return d.postArticle.id;
  };
  ids.aliceFirst = await post('alice', 'First post', 'tech');
  ids.aliceSecond = await post('alice', 'Second post', 'life');
  ids.bobPost = await post('bob', 'Bob writes', 'tech');

  // Well-formed ids of an article and a relationship that no longer exist.
  ids.goneArticle = await post('dave', 'Gone', 'tech');
  const gone = await hb.gqlData(`mutation {
    r: createRelationship(startNodeId: "dave", type: "follows", endNodeId: "bob") { id }
  }`);
  ids.goneRelationship = gone.r.id;
  await hb.gqlData(
    `mutation($a: ID!) {
      deleteArticle(id: $a)
      deleteRelationship(startNodeId: "dave", type: "follows", endNodeId: "bob")
    }`,
    { a: ids.goneArticle },
  );

  social = await startSocial({
    reputations: new Map([
      ['carol', 90],
      ['alice', 75],
      ['bob', 40],
    ]),
    pinnedArticleIds: [ids.aliceSecond, ids.bobPost],
    highlightedRelationshipId: ids['alice->bob'],
  });

  const gateway = new ApolloGateway({
    supergraphSdl: new IntrospectAndCompose({
      subgraphs: [
        { name: 'hbgraph', url: hb.url },
        { name: 'social', url: social.url },
      ],
    }),
    buildService: ({ name, url }) => new RecordingDataSource({ name, url }),
  });
  gatewayServer = new ApolloServer({ gateway });
  const port = await freePort();
  ({ url: gatewayUrl } = await startStandaloneServer(gatewayServer, { listen: { host: '127.0.0.1', port } }));
});

after(async () => {
  // Each step runs even if an earlier one failed or never started.
  const results = await Promise.allSettled([gatewayServer?.stop(), social?.stop()]);
  await hb?.stop();
  for (const r of results) if (r.status === 'rejected') throw r.reason;
});

describe('hbgraph behind @apollo/gateway', () => {
  test("hbgraph's root fields pass through unchanged", async () => {
    const query = `query($article: ID!) {
      node(id: "alice") {
        id
        properties
        relationships(type: "follows", direction: OUTGOING) {
          totalCount
          edges { neighbor { id } }
        }
      }
      article(id: $article) { id title body category author { id } }
    }`;
    const variables = { article: ids.aliceFirst };
    sent.length = 0;
    const data = await viaGateway(query, variables);

    assert.deepEqual(data, {
      node: {
        id: 'alice',
        properties: { name: 'Alice', city: 'Tokyo' },
        relationships: {
          totalCount: 3,
          edges: [{ neighbor: { id: 'dave' } }, { neighbor: { id: 'carol' } }, { neighbor: { id: 'bob' } }],
        },
      },
      article: {
        id: ids.aliceFirst,
        title: 'First post',
        body: 'body of First post',
        category: 'tech',
        author: { id: 'alice' },
      },
    });
    // The same answer hbgraph gives directly, from one request to it.
    assert.deepEqual(data, await hb.gqlData(query, variables));
    assert.equal(sentTo('hbgraph').length, 1);
    assert.equal(sentTo('social').length, 0);
  });

  test("social's Node references are completed by ONE _entities request to hbgraph", async () => {
    const query = `{
      topNodes {
        id
        reputation
        properties
        relationships(type: "follows", direction: OUTGOING, first: 5) { totalCount }
      }
    }`;
    sent.length = 0;
    const before = await hbgraphRequestsTotal();
    const data = await viaGateway(query);
    const hbgraphRequests = (await hbgraphRequestsTotal()) - before;

    assert.deepEqual(data.topNodes, [
      { id: 'carol', reputation: 90, properties: { name: 'Carol', tags: ['a', 'b'] }, relationships: { totalCount: 1 } },
      { id: 'alice', reputation: 75, properties: { name: 'Alice', city: 'Tokyo' }, relationships: { totalCount: 3 } },
      { id: 'bob', reputation: 40, properties: { name: 'Bob' }, relationships: { totalCount: 1 } },
    ]);

    // Counted on the gateway's side (every request it sent to hbgraph) ...
    const toHbgraph = sentTo('hbgraph');
    assert.equal(toHbgraph.length, 1, `requests to hbgraph: ${JSON.stringify(toHbgraph, null, 2)}`);
    assert.match(toHbgraph[0].query, /_entities\(representations:/);
    assert.deepEqual(toHbgraph[0].variables.representations, [
      { __typename: 'Node', id: 'carol' },
      { __typename: 'Node', id: 'alice' },
      { __typename: 'Node', id: 'bob' },
    ]);
    assert.equal(sentTo('social').length, 1);
    // ... and on hbgraph's (its request counter, /metrics itself not counted).
    assert.equal(hbgraphRequests, 1);
  });

  test("hbgraph's nodes get social's reputation", async () => {
    const data = await viaGateway(`{
      node(id: "alice") {
        reputation
        relationships(type: "follows", direction: OUTGOING) { edges { neighbor { id reputation } } }
      }
    }`);
    assert.deepEqual(data.node, {
      reputation: 75,
      relationships: {
        edges: [
          { neighbor: { id: 'dave', reputation: 0 } },
          { neighbor: { id: 'carol', reputation: 90 } },
          { neighbor: { id: 'bob', reputation: 40 } },
        ],
      },
    });
  });

  test('references to Articles and a Relationship from social resolve through hbgraph', async () => {
    sent.length = 0;
    const data = await viaGateway(`{
      pinnedArticles { id title category author { id reputation } }
      highlightedRelationship { id type startNode { id } endNode { id property(name: "name") } properties }
    }`);
    assert.deepEqual(data, {
      pinnedArticles: [
        { id: ids.aliceSecond, title: 'Second post', category: 'life', author: { id: 'alice', reputation: 75 } },
        { id: ids.bobPost, title: 'Bob writes', category: 'tech', author: { id: 'bob', reputation: 40 } },
      ],
      highlightedRelationship: {
        id: ids['alice->bob'],
        type: 'follows',
        startNode: { id: 'alice' },
        endNode: { id: 'bob', property: 'Bob' },
        properties: { since: 2021 },
      },
    });
    // One _entities request per path (pinnedArticles, highlightedRelationship).
    const toHbgraph = sentTo('hbgraph');
    for (const r of toHbgraph) assert.match(r.query, /_entities\(representations:/);
    assert.deepEqual(
      toHbgraph.flatMap((r) => r.variables.representations).sort((a, b) => a.id.localeCompare(b.id)),
      [
        { __typename: 'Article', id: ids.aliceSecond },
        { __typename: 'Article', id: ids.bobPost },
        { __typename: 'Relationship', id: ids['alice->bob'] },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });
});

describe('hbgraph as a subgraph, directly', () => {
  test('_entities resolves Articles and Relationships; unknown ids are null', async () => {
    const { status, body } = await hb.gql(
      `query($representations: [_Any!]!) {
        _entities(representations: $representations) {
          __typename
          ... on Article { id title body category author { id } }
          ... on Relationship { id type startNode { id } endNode { id } properties }
          ... on Node { id properties }
        }
      }`,
      {
        representations: [
          { __typename: 'Article', id: ids.aliceFirst },
          { __typename: 'Relationship', id: ids['bob->carol'] },
          { __typename: 'Article', id: ids.goneArticle },
          { __typename: 'Relationship', id: ids.goneRelationship },
          { __typename: 'Node', id: 'nobody' },
          { __typename: 'Node', id: 'carol' },
        ],
      },
    );
    assert.equal(status, 200);
    assert.deepEqual(body, {
      data: {
        _entities: [
          {
            __typename: 'Article',
            id: ids.aliceFirst,
            title: 'First post',
            body: 'body of First post',
            category: 'tech',
            author: { id: 'alice' },
          },
          {
            __typename: 'Relationship',
            id: ids['bob->carol'],
            type: 'follows',
            startNode: { id: 'bob' },
            endNode: { id: 'carol' },
            properties: { since: 2021 },
          },
          null,
          null,
          null,
          { __typename: 'Node', id: 'carol', properties: { name: 'Carol', tags: ['a', 'b'] } },
        ],
      },
    });
  });

  // A gateway never sends these; a hand-written client can. They are the
  // request's own mistake: BAD_USER_INPUT, not INTERNAL.
  test(
    'a representation of an unknown type or without its key is BAD_USER_INPUT',
    async () => {
      for (const representations of [
        [{ __typename: 'Node', id: 'alice' }, { __typename: 'NoSuchType', id: 'alice' }],
        [{ __typename: 'Node' }],
      ]) {
        const { status, body } = await hb.gql(
          'query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id } } }',
          { r: representations },
        );
        assert.equal(status, 200);
        assert.equal(body.errors?.length, 1, JSON.stringify(body));
        assert.equal(body.errors[0].extensions.code, 'BAD_USER_INPUT', JSON.stringify(body));
      }
    },
  );

  test("@apollo/composition composes hbgraph's and social's SDL without errors", async (t) => {
    const sdlOf = async (url) => {
      const { status, body } = await postGraphQL(url, '{ _service { sdl } }');
      assert.equal(status, 200);
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      return body.data._service.sdl;
    };
    // With authentication configured (or, as here, the flag forcing it),
    // hbgraph's SDL carries @authenticated, for Apollo Router.
    const withDirectives = await startHbgraph(['--federation-auth-directives']);
    let hbgraphSdl;
    try {
      hbgraphSdl = await sdlOf(withDirectives.url);
    } finally {
      await withDirectives.stop();
    }
    assert.doesNotMatch(await sdlOf(hb.url), /@authenticated/);
    const socialSdl = await sdlOf(social.url);
    assert.match(hbgraphSdl, /type Node @key\(fields: "id"\)/);
    assert.match(socialSdl, /reputation: Int!/);
    // hbgraph says which fields need an authenticated caller (and enforces
    // it itself, whatever the gateway does).
    assert.match(hbgraphSdl, /owner: String @authenticated/);
    assert.match(hbgraphSdl, /createNode\(id: ID!, properties: JSON\): Node! @authenticated/);

    const result = composeServices([
      { name: 'hbgraph', url: hb.url, typeDefs: parse(hbgraphSdl) },
      { name: 'social', url: social.url, typeDefs: parse(socialSdl) },
    ]);
    assert.deepEqual(result.errors ?? [], [], `composition errors:\n${(result.errors ?? []).join('\n')}`);
    for (const hint of result.hints ?? []) t.diagnostic(`composition hint ${hint.definition.code}: ${hint.message}`);
    const supergraph = result.supergraphSdl;
    assert.match(supergraph, /type Node\s+@join__type\(graph: HBGRAPH, key: "id"\)\s+@join__type\(graph: SOCIAL, key: "id"\)/);
    assert.match(supergraph, /reputation: Int! @join__field\(graph: SOCIAL\)/);
    assert.match(supergraph, /topNodes: \[Node!\]! @join__field\(graph: SOCIAL\)/);
    assert.match(supergraph, /article\(id: ID!\): Article @join__field\(graph: HBGRAPH\)/);
    assert.match(supergraph, /owner: String[^\n]*@authenticated/);
    assert.match(supergraph, /deleteNode\([^)]*\): ID![^\n]*@authenticated/);
  });
});
