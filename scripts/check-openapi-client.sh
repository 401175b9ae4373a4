#!/usr/bin/env bash
# Generates a Go client from api/openapi.yaml with oapi-codegen v2 at its
# default settings (-generate types,client) into a scratch module and builds
# it, so the document stays one that code generators accept. It also checks
# that every generated error envelope keeps `message` and `request_id`.
#
#   scripts/check-openapi-client.sh [DOCUMENT]   (default api/openapi.yaml; needs Go and the module proxy)
set -euo pipefail
cd "$(dirname "$0")/.."
doc=$(realpath "${1:-api/openapi.yaml}")
oapi_codegen=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/client"
cd "$scratch"
export GOWORK=off GOFLAGS=-mod=mod

go mod init example.com/strongroom-client-check >/dev/null 2>&1
echo "generating the client with $oapi_codegen"
go run "$oapi_codegen" -generate types,client -package client "$doc" >client/client.gen.go
go mod tidy >/dev/null 2>&1 || { go mod tidy; exit 1; }
go build ./...
go vet ./...

# Every struct of the form {Error struct {...} `json:"error"`} (the error
# envelopes) must carry Message and RequestId; composing schemas with allOf
# used to leave only Type.
awk '
  /^type [A-Za-z0-9_]+ struct \{$/ { name = $2; next }
  /^\tError struct \{$/ { inside = 1; message = 0; request = 0; next }
  inside && /^\t\tMessage / { message = 1 }
  inside && /^\t\tRequestId / { request = 1 }
  inside && /^\t\} `json:"error"`$/ {
    inside = 0; envelopes++
    if (!message || !request) { print "error envelope " name " lacks message or request_id"; bad = 1 }
  }
  END {
    if (envelopes == 0) { print "no error envelope types were generated"; bad = 1 }
    if (!bad) print envelopes " error envelope types, each with message and request_id"
    exit bad
  }' client/client.gen.go

# Each error envelope schema that operations use must have become such a type
# (not, say, a union without fields).
for name in $(grep -B4 '^      required: \[error\]$' "$doc" | sed -n 's/^    \([A-Za-z0-9]*\):$/\1/p'); do
  grep -q "#/components/schemas/$name'" "$doc" || continue
  if ! grep -A1 -x "type $name struct {" client/client.gen.go | grep -q $'^\tError struct {$'; then
    echo "schema $name did not become an error envelope type with message and request_id"
    exit 1
  fi
done
echo "the generated client builds ($(wc -l <client/client.gen.go) lines)"
