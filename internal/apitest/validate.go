package apitest

import (
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// kin-openapi validates a JSON value against a schema of an OpenAPI 3.1
// document by compiling the schema for a JSON Schema 2020-12 validator, on
// every response: most of what the end-to-end tests spend. For a schema
// that refers to components and uses none of the keywords only JSON Schema
// 2020-12 has, it then throws the compiled validator away and validates with
// the validator of OpenAPI 3.0 documents (openapi3/schema_jsonschema_validator.go,
// useJSONSchema2020, in kin-openapi v0.152.0). Such bodies are validated
// here as part of a 3.0 document directly: the same validator, the same
// verdict, without the compilation. (That validator differs between the two
// versions only in honouring nullable; a schema using it is left to
// kin-openapi.)

// bodyValidatedAsOpenAPI30 reports whether r's body is JSON whose schema
// kin-openapi would validate with its OpenAPI 3.0 validator.
func bodyValidatedAsOpenAPI30(route *routers.Route, r *Response) bool {
	if r.Status == 304 || r.Status == 307 || r.Status == 308 || r.Status == 301 {
		return false
	}
	responses := route.Operation.Responses
	if responses == nil || responses.Len() == 0 {
		return false
	}
	ref := responses.Status(r.Status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return false
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return false
	}
	content := ref.Value.Content.Get(ct)
	if content == nil || content.Schema == nil || content.Schema.Value == nil {
		return false
	}
	return validatedAs30(content.Schema.Value)
}

var as30Cache sync.Map // *openapi3.Schema → bool

// validatedAs30 is kin-openapi's choice for s: it refers to a component
// schema and no schema under it uses a keyword of JSON Schema 2020-12 (or
// nullable).
func validatedAs30(s *openapi3.Schema) bool {
	if v, ok := as30Cache.Load(s); ok {
		return v.(bool)
	}
	v := refersToComponent(s) && !uses2020Keywords(s)
	as30Cache.Store(s, v)
	return v
}

func refersToComponent(s *openapi3.Schema) bool {
	raw, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return false
	}
	var walk func(any) bool
	walk = func(n any) bool {
		switch n := n.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok && strings.HasPrefix(ref, "#/components/schemas/") {
				return true
			}
			for _, v := range n {
				if walk(v) {
					return true
				}
			}
		case []any:
			for _, v := range n {
				if walk(v) {
					return true
				}
			}
		}
		return false
	}
	return walk(doc)
}

var errFound = errors.New("found")

func uses2020Keywords(s *openapi3.Schema) bool {
	err := openapi3.NewSchemaRef("", s).WalkSubtree(func(_ string, ref *openapi3.SchemaRef) error {
		v := ref.Value
		if v != nil && (v.Nullable || v.Const != nil || len(v.PrefixItems) != 0 || v.Contains != nil || len(v.PatternProperties) != 0 ||
			len(v.DependentSchemas) != 0 || v.PropertyNames != nil ||
			v.UnevaluatedItems.Has != nil || v.UnevaluatedItems.Schema != nil ||
			v.UnevaluatedProperties.Has != nil || v.UnevaluatedProperties.Schema != nil ||
			v.If != nil || v.Then != nil || v.Else != nil || len(v.DependentRequired) != 0 || len(v.Defs) != 0 ||
			v.ContentSchema != nil) {
			return errFound
		}
		return nil
	})
	return errors.Is(err, errFound)
}

var (
	as30Once sync.Once
	as30Doc  *openapi3.T
)

// docAs30 is the document marked as OpenAPI 3.0, which selects kin-openapi's
// 3.0 validator.
func docAs30() *openapi3.T {
	as30Once.Do(func() {
		d := *docShared
		d.OpenAPI = "3.0.3"
		as30Doc = &d
	})
	return as30Doc
}
