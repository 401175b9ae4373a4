package audit_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/audit"
)

// TestActionsAreDocumented keeps the list of actions in docs/api.md (Audit
// log) and audit.Actions the same.
func TestActionsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Audit log\n")
	if start < 0 {
		t.Fatal("docs/api.md has no Audit log section")
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	list := section[strings.Index(section, "- **Actions**"):]
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z_]+\\.[a-z_]+)`").FindAllStringSubmatch(list, -1) {
		documented = append(documented, m[1])
	}
	got, want := slices.Sorted(slices.Values(documented)), slices.Sorted(slices.Values(audit.Actions))
	if !slices.Equal(got, want) {
		t.Fatalf("docs/api.md lists actions\n%v\nthe code has\n%v", got, want)
	}
}
