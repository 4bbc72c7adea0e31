// Package plan is a compiled executor for hbgraph's queries (issue 14):
// "plan once, execute many".
//
// gqlgen stays the server: transports, parsing, the query cache,
// validation, variable coercion and every handler extension run as
// before. Wrap puts a planned executor in front of gqlgen's executable
// schema: for an operation it covers, Exec compiles a plan once per cached
// document (and per value of the variables @skip/@include read), fetches
// the data wave by wave, one wave per level of nodes, and writes the
// response into one buffer in a single depth-first pass. Anything the
// compiler does not know (mutations, introspection, _service, @defer, a
// field not yet planned) goes to gqlgen's executor, decided at compile
// time and cached with the plan; so does an operation whose arguments do
// not convert, or whose _entities representations gqlgen would refuse
// (decided per request, before anything is read), so that gqlgen's own
// messages stay gqlgen's.
//
// Responses are byte for byte gqlgen's: data, errors (messages, paths,
// locations, codes through the same error presenter) and nulls. The
// differential test (diff_test.go) holds the two executors to that.
package plan
