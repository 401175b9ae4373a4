// Package spec parses the embedded OpenAPI document with kin-openapi, for
// the tests and tools that validate against it. The server itself only
// serves the document (package api) and does not link the parser.
package spec

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/strongroom/strongroom/api"
)

// Load parses the document.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return doc, nil
}
