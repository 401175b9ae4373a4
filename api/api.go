// Package api embeds the OpenAPI 3.1 document of every Strongroom operation.
package api

import (
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// YAML is api/openapi.yaml as written.
//
//go:embed openapi.yaml
var YAML []byte

// Load parses and validates the document.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(YAML)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return doc, nil
}

// JSON returns the document as JSON, as /api/v1/openapi.json serves it.
func JSON() ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	return doc.MarshalJSON()
}
