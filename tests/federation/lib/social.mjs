// "social": a second subgraph, written with @apollo/subgraph, that adds a
// reputation to hbgraph's Node entity and hands out references to hbgraph's
// Node, Article and Relationship entities for the gateway to complete.

// hbgraph.mjs sets APOLLO_TELEMETRY_DISABLED when it loads, so it comes
// first and the Apollo packages are imported after it.
import { freePort } from '../../jslib/hbgraph.mjs';

const { ApolloServer } = await import('@apollo/server');
const { startStandaloneServer } = await import('@apollo/server/standalone');
const { ApolloServerPluginInlineTraceDisabled } = await import('@apollo/server/plugin/disabled');
const { buildSubgraphSchema } = await import('@apollo/subgraph');
const { parse } = await import('graphql');

export const socialTypeDefs = parse(`#graphql
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Node @key(fields: "id") {
    id: ID!
    reputation: Int!
  }

  type Article @key(fields: "id", resolvable: false) {
    id: ID!
  }

  type Relationship @key(fields: "id", resolvable: false) {
    id: ID!
  }

  type Query {
    "The nodes with the best reputation, best first."
    topNodes: [Node!]!
    pinnedArticles: [Article!]!
    highlightedRelationship: Relationship
  }
`);

/**
 * Starts the subgraph on 127.0.0.1. reputations maps node ids (that exist
 * in hbgraph) to reputations; pinnedArticleIds and highlightedRelationshipId
 * are hbgraph ids. Returns { url, stop }.
 */
export async function startSocial({ reputations, pinnedArticleIds = [], highlightedRelationshipId = null }) {
  const reputationOf = (id) => reputations.get(id) ?? 0;
  const resolvers = {
    Query: {
      topNodes: () =>
        [...reputations.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => ({ __typename: 'Node', id })),
      pinnedArticles: () => pinnedArticleIds.map((id) => ({ __typename: 'Article', id })),
      highlightedRelationship: () =>
        highlightedRelationshipId && { __typename: 'Relationship', id: highlightedRelationshipId },
    },
    Node: {
      __resolveReference: ({ id }) => ({ id }),
      reputation: ({ id }) => reputationOf(id),
    },
  };
  const server = new ApolloServer({
    schema: buildSubgraphSchema({ typeDefs: socialTypeDefs, resolvers }),
    // No traces in responses: nothing here reports usage.
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  const port = await freePort();
  const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port } });
  return { url, stop: () => server.stop() };
}
