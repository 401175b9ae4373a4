package httpapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/api/spec"
	"github.com/strongroom/strongroom/internal/httpapi"
)

// TestRoutesAndDocumentAgree fails when routes.go and api/openapi.yaml
// disagree on the set of operations.
func TestRoutesAndDocumentAgree(t *testing.T) {
	doc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	routes := httpapi.Operations()
	slices.Sort(documented)
	slices.Sort(routes)
	for _, r := range routes {
		if _, found := slices.BinarySearch(documented, r); !found {
			t.Errorf("route %s is not in api/openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if _, found := slices.BinarySearch(routes, d); !found {
			t.Errorf("api/openapi.yaml documents %s, which routes.go does not serve", d)
		}
	}
	if len(slices.Compact(slices.Clone(routes))) != len(routes) {
		t.Error("routes.go lists an operation twice")
	}
}

func TestEveryOperationHasAnID(t *testing.T) {
	doc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", where)
			}
			if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("operationId %s used by %s and %s", op.OperationID, prev, where)
			}
			seen[op.OperationID] = where
		}
	}
}
