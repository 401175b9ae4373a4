// Package api is the generated part of the Strongroom Go client: every
// schema of api/openapi.yaml as a Go type (Payment, Bill, Card, …, with
// their enum constants) and one low-level method per operation
// ([ClientWithResponses]). Most callers use package
// github.com/strongroom/strongroom/client, whose helpers take and return
// these types; [client.Client.API] gives this package's client with the
// same bearer, step-up, 429 and idempotency handling for anything the
// helpers do not cover.
//
// Do not edit openapi.gen.go: it comes from api/openapi.yaml with
// oapi-codegen, pinned below; oapi-codegen.yaml and overlay.yaml configure
// it. scripts/check-client-generated.sh regenerates it into a temporary
// directory in CI and fails when openapi.gen.go differs.
//
// [client.Client.API]: https://pkg.go.dev/github.com/strongroom/strongroom/client#Client.API
package api

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o openapi.gen.go ../../api/openapi.yaml
