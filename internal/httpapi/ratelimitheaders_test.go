package httpapi_test

import (
	"testing"

	"github.com/strongroom/strongroom/api/spec"
)

// Every route passes the address limit, so every response of every
// operation may carry RateLimit-Policy and RateLimit: the document
// declares them beside X-Request-Id wherever that is declared.
func TestEveryResponseDeclaresTheRateLimitHeaders(t *testing.T) {
	doc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, resp := range op.Responses.Map() {
				if resp.Value == nil || resp.Value.Headers["X-Request-Id"] == nil {
					continue
				}
				for _, h := range []string{"RateLimit-Policy", "RateLimit"} {
					if ref := resp.Value.Headers[h]; ref == nil || ref.Ref != "#/components/headers/"+h {
						t.Errorf("%s %s answers %s without declaring %s ($ref: '#/components/headers/%s')", method, path, status, h, h)
					}
				}
			}
		}
	}
}
