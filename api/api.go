// Package api embeds the OpenAPI 3.1 document of every Strongroom operation.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

// YAML is api/openapi.yaml as written.
//
//go:embed openapi.yaml
var YAML []byte

// JSON returns the document as JSON, as /api/v1/openapi.json serves it. It
// is converted on first use, not at start-up: few requests ask for it, and
// the conversion costs tens of milliseconds and megabytes.
var JSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(YAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	return out, nil
})
