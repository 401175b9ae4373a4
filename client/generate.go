package client

// The generated part (types and low-level calls, openapi.gen.go) comes from
// api/openapi.yaml with oapi-codegen, pinned; oapi-codegen.yaml and
// overlay.yaml configure it. scripts/check-client-generated.sh regenerates it
// into a temporary directory in CI and fails when openapi.gen.go differs.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o openapi.gen.go ../api/openapi.yaml
