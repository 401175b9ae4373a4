package api_test

import (
	"bytes"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/strongroom/strongroom/api"
	"github.com/strongroom/strongroom/api/spec"
)

// The served JSON is the document written in YAML: read by kin-openapi,
// both say the same (the JSON keeps what the parser would leave out as a
// default, such as required: false).
func TestJSONIsTheWrittenDocument(t *testing.T) {
	served, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(served)
	if err != nil {
		t.Fatalf("served JSON: %v", err)
	}
	fromYAML, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	a, err := fromJSON.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := fromYAML.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the served JSON and api/openapi.yaml describe different documents")
	}
}
