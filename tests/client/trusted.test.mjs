// Trusted documents through a real client: Apollo Client's
// PersistedQueryLink sends only the sha256 of each operation, and hbgraph
// started with --trusted-documents-only answers the operations of its
// manifest (Apollo's persisted query manifest format) and refuses any
// other with PERSISTED_QUERY_NOT_IN_LIST.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

// First: it sets APOLLO_TELEMETRY_DISABLED before the Apollo packages load.
import { startHbgraph } from '../jslib/hbgraph.mjs';

const { ApolloClient, HttpLink, InMemoryCache, gql } = await import('@apollo/client');
const { PersistedQueryLink } = await import('@apollo/client/link/persisted-queries');

const PERSON = gql`
  query Person($id: ID!) {
    node(id: $id) {
      id
      name: property(name: "name")
      relationships(type: "follows", direction: OUTGOING, first: 3) {
        totalCount
      }
    }
  }
`;

const NOT_SHIPPED = gql`
  query NotShipped {
    nodes(ids: ["alice", "bob"]) {
      id
      properties
    }
  }
`;

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

const dir = mkdtempSync(path.join(tmpdir(), 'hbgraph-trusted-'));
const servers = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** A client whose PersistedQueryLink records every body it hashes, and a fetch that records every request. */
function persistedClient(url, hashed, sent) {
  const recordingFetch = async (uri, init) => {
    sent.push(JSON.parse(init.body));
    return fetch(uri, init);
  };
  const link = new PersistedQueryLink({
    sha256: (body) => {
      hashed.set(sha256(body), body);
      return sha256(body);
    },
  }).concat(new HttpLink({ uri: url, fetch: recordingFetch }));
  return new ApolloClient({ link, cache: new InMemoryCache() });
}

test('PersistedQueryLink runs the manifest operations by id; anything else is refused', { timeout: 60_000 }, async () => {
  // The app's build step: the operations it ships, as the link prints and
  // hashes them, become the manifest (as @apollo/generate-persisted-query-manifest
  // writes it). Here they are recorded from a run against an open server.
  const open = await startHbgraph(['--example-data']);
  servers.push(open);
  const hashed = new Map();
  const build = persistedClient(open.url, hashed, []);
  const built = await build.query({ query: PERSON, variables: { id: 'alice' } });
  assert.equal(built.data.node.id, 'alice');
  build.stop();
  assert.equal(hashed.size, 1);
  const manifest = {
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: [...hashed].map(([id, body]) => ({ id, name: 'Person', type: 'query', body })),
  };
  const manifestPath = path.join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify(manifest));

  const trusted = await startHbgraph(['--example-data', '--trusted-documents', manifestPath, '--trusted-documents-only']);
  servers.push(trusted);
  const sent = [];
  const client = persistedClient(trusted.url, new Map(), sent);
  const { data } = await client.query({ query: PERSON, variables: { id: 'bob' } });
  assert.equal(data.node.id, 'bob');
  assert.equal(typeof data.node.name, 'string');
  assert.ok(data.node.relationships.totalCount > 0);
  // Only the hash went over the wire: the manifest supplied the document.
  assert.equal(sent.length, 1);
  assert.equal(sent[0].query, undefined, JSON.stringify(sent[0]));
  assert.equal(sent[0].extensions.persistedQuery.sha256Hash, manifest.operations[0].id);

  // An operation the app did not ship: the link's hash is not listed, and
  // neither is the full text a plain HttpLink sends.
  await assert.rejects(client.query({ query: NOT_SHIPPED }), (err) => {
    assert.match(JSON.stringify(err), /PERSISTED_QUERY_NOT_IN_LIST/);
    return true;
  });
  const plain = new ApolloClient({ link: new HttpLink({ uri: trusted.url, fetch }), cache: new InMemoryCache() });
  await assert.rejects(plain.query({ query: NOT_SHIPPED }), /not in the trusted documents manifest/);
  client.stop();
  plain.stop();
});
