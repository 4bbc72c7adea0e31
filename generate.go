package main

// gqlgen regenerates graph/generated and the resolver stubs from
// graph/schema.graphqls; `make test` fails if the committed output differs.
//go:generate go tool gqlgen generate
