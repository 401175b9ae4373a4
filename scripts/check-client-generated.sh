#!/usr/bin/env bash
# Fails when client/api/openapi.gen.go is not what `go generate ./client/...`
# makes of api/openapi.yaml now: it runs the generator pinned in
# client/api/generate.go, with client/api/oapi-codegen.yaml and
# client/api/overlay.yaml, into a temporary file
# and compares. A few seconds once the generator is built (CI builds it
# already for scripts/check-openapi-client.sh).
#
#   scripts/check-client-generated.sh   (needs Go and, the first time, the module proxy)
set -euo pipefail
cd "$(dirname "$0")/../client/api"
line=$(grep -E '^//go:generate go run [^ ]+@v[0-9.]+ ' generate.go) || { echo "client/api/generate.go has no pinned go:generate line"; exit 1; }
read -r -a words <<<"${line#//go:generate }"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The same command, writing into the scratch directory instead.
args=()
for ((i = 0; i < ${#words[@]}; i++)); do
  if [ "${words[i]}" = "-o" ]; then args+=(-o "$scratch/openapi.gen.go"); i=$((i + 1)); else args+=("${words[i]}"); fi
done
GOWORK=off "${args[@]}"
if ! diff -u openapi.gen.go "$scratch/openapi.gen.go" >"$scratch/diff"; then
  head -60 "$scratch/diff"
  echo "client/api/openapi.gen.go is stale: run 'go generate ./client/...' and commit the result"
  exit 1
fi
echo "client/api/openapi.gen.go is up to date ($(wc -l <openapi.gen.go) lines)"
