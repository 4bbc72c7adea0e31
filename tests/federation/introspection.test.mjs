// With --introspection=false hbgraph still serves federation's
// _service { sdl } (a gateway composes from it) but refuses __schema and
// __type.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

// First: it sets APOLLO_TELEMETRY_DISABLED before the Apollo packages load.
import { startHbgraph } from '../jslib/hbgraph.mjs';

const { ApolloGateway, IntrospectAndCompose } = await import('@apollo/gateway');

let hb;

before(async () => {
  // No authentication and no --federation-auth-directives: the SDL carries
  // no @authenticated, which @apollo/gateway would refuse.
  hb = await startHbgraph(['--introspection=false']);
});

after(async () => {
  await hb?.stop();
});

test('_service { sdl } answers with the schema', async () => {
  const { status, body } = await hb.gql('{ _service { sdl } }');
  assert.equal(status, 200);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  const schemaFile = readFileSync(new URL('../../graph/schema.graphqls', import.meta.url), 'utf8');
  // The schema as written, less @authenticated (authentication is off).
  const withoutAuth = schemaFile.replaceAll(', "@authenticated"', '').replaceAll(' @authenticated', '');
  assert.notEqual(withoutAuth, schemaFile);
  assert.equal(body.data._service.sdl, withoutAuth);
});

test('__schema and __type are refused', async () => {
  for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Node") { name } }']) {
    const { body } = await hb.gql(query);
    assert.equal(body.data ?? null, null, `${query} answered ${JSON.stringify(body)}`);
    assert.equal(body.errors?.length, 1, `${query} answered ${JSON.stringify(body)}`);
    assert.match(body.errors[0].message, /introspection/i);
  }
  // An ordinary query still works.
  assert.deepEqual(await hb.gqlData('{ __typename node(id: "none") { id } }'), { __typename: 'Query', node: null });
});

test('@apollo/gateway composes a supergraph from it', async () => {
  const gateway = new ApolloGateway({
    supergraphSdl: new IntrospectAndCompose({ subgraphs: [{ name: 'hbgraph', url: hb.url }] }),
  });
  try {
    const { schema } = await gateway.load();
    assert.ok(schema.getQueryType().getFields().article);
    assert.ok(schema.getType('Relationship'));
  } finally {
    await gateway.stop();
  }
});
