package internal_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the repository starts with.
const module = "github.com/strongroom/strongroom/"

// A tier is a layer of the architecture; a package may import packages of
// its own tier and of the tiers below, never of a tier above. Features are
// the exception within a tier: they never import one another.
type tier int

const (
	platform  tier = iota + 1 // building blocks that know no business: db, money, apierr, …
	core                      // what every feature stands on: organizations, people, the ledger, files
	feature                   // one business capability each; siblings that never import each other
	flow                      // a use case spanning features, owning its transaction (and the sandbox)
	transport                 // HTTP, the CLI, the public client, and app wiring them up
	testing_                  // helpers only tests use; they may import anything
)

func (t tier) String() string {
	return [...]string{"", "platform", "core", "feature", "flow", "transport/wiring", "test support"}[t]
}

// tiers names the tier of every package of the repository, by its path
// below the module (internal/bill/extract counts as its own entry; as a
// feature's sub-package it belongs to that feature, bill). A new package
// gets its line here; TestEveryPackageHasATier fails until it does.
var tiers = map[string]tier{
	"internal/platform/apierr":      platform,
	"internal/platform/bankdetails": platform,
	"internal/platform/clock":       platform,
	"internal/platform/db":          platform,
	"internal/platform/event":       platform,
	"internal/platform/field":       platform,
	"internal/platform/idempotency": platform,
	"internal/platform/job":         platform,
	"internal/platform/keyring":     platform,
	"internal/platform/metrics":     platform,
	"internal/platform/money":       platform,
	"internal/platform/outbox":      platform,
	"internal/platform/page":        platform,
	"internal/platform/ratelimit":   platform,
	"internal/platform/watched":     platform,
	"internal/platform/webhooksend": platform,

	"internal/actor":        core,
	"internal/organization": core,
	"internal/identity":     core,
	"internal/ledger":       core,
	"internal/file":         core,
	"internal/audit":        core,

	"internal/apikey":                feature,
	"internal/bill":                  feature,
	"internal/bill/extract":          feature,
	"internal/bill/extract/isolated": feature,
	"internal/card":                  feature,
	"internal/expense":               feature,
	"internal/insight":               feature,
	"internal/statement":             feature,
	"internal/invoicing":             feature,
	"internal/mca":                   feature,
	"internal/onboarding":            feature,
	"internal/payment":               feature,
	"internal/paymentrequest":        feature,
	"internal/stepup":                feature,
	"internal/webhook":               feature,
	"internal/flow/approving":        flow,
	"internal/flow/billpay":          flow,
	"internal/flow/binding":          flow,
	"internal/flow/statementing":     flow,
	"internal/flow/cardspend":        flow,
	"internal/flow/confirming":       flow,
	"internal/flow/requesting":       flow,
	"internal/sandbox":               flow,
	"internal/httpapi":               transport,
	"internal/cli":                   transport,
	"internal/console":               transport,
	"internal/app":                   transport,
	"client":                         transport,
	"client/api":                     transport,
	"cmd/strongroom":                 transport,
	"internal/apitest":               testing_,
	"internal/fixture":               testing_,
	"internal/plans":                 testing_,
	"internal/e2e":                   testing_,
	"internal/file/filetest":         testing_,
	"internal/platform/db/dbtest":    testing_,
}

// featureOf is the feature a package of the feature tier belongs to: its
// first directory below internal/ (bill/extract is bill).
func featureOf(pkg string) string {
	return strings.SplitN(strings.TrimPrefix(pkg, "internal/"), "/", 2)[0]
}

// edge is one import of a repository package by another.
type edge struct {
	from, to string
	pos      token.Position // the first import of to in from
}

// repositoryImports parses the import clauses of every Go file of the
// repository's packages (under internal/, client/ and cmd/, skipping
// testdata as the go tool does) and returns the packages found (a
// directory of Go files, tests alone included) and the imports of other
// repository packages by their non-test files. Test files are free: a test,
// in its package or beside it, may import whatever it needs to set the
// scene, since nothing that ships depends on it.
func repositoryImports(t *testing.T) (map[string]bool, []edge) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]bool{}
	seen := map[[2]string]bool{}
	var edges []edge
	for _, top := range []string{"../internal", "../client", "../cmd"} {
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel("..", filepath.Dir(path))
			if err != nil {
				return err
			}
			pkg := filepath.ToSlash(rel)
			if pkg == "internal" {
				return nil // internal/ itself holds only these rule tests
			}
			pkgs[pkg] = true
			if strings.HasSuffix(path, "_test.go") {
				return nil // a test may import whatever it needs
			}
			for _, imp := range f.Imports {
				to, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					return err
				}
				if !strings.HasPrefix(to, module) {
					continue
				}
				to = strings.TrimPrefix(to, module)
				if to == pkg || seen[[2]string{pkg, to}] {
					continue
				}
				seen[[2]string{pkg, to}] = true
				edges = append(edges, edge{from: pkg, to: to, pos: fset.Position(imp.Pos())})
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if len(edges) == 0 {
		t.Fatal("no imports found: the scanner is broken")
	}
	slices.SortFunc(edges, func(a, b edge) int { return strings.Compare(a.from+" "+a.to, b.from+" "+b.to) })
	return pkgs, edges
}

// TestEveryPackageHasATier keeps the tier map complete and current.
func TestEveryPackageHasATier(t *testing.T) {
	pkgs, _ := repositoryImports(t)
	for pkg := range pkgs {
		if _, ok := tiers[pkg]; !ok {
			t.Errorf("package %s has no tier: add it to tiers in internal/tiers_test.go (platform, core, feature, flow, transport/wiring or test support)", pkg)
		}
	}
	for pkg := range tiers {
		if !pkgs[pkg] {
			t.Errorf("tiers names package %s, which does not exist: remove its line", pkg)
		}
	}
}

// TestNoPackageImportsAHigherTier fails when a package imports a package
// of a tier above its own: platform under core under features under flows
// under transports.
func TestNoPackageImportsAHigherTier(t *testing.T) {
	_, edges := repositoryImports(t)
	for _, e := range edges {
		from, ok1 := tiers[e.from]
		to, ok2 := tiers[e.to]
		if !ok1 || !ok2 || to <= from {
			continue // an unnamed package is TestEveryPackageHasATier's to report
		}
		t.Errorf("%s: %s (%s) imports %s (%s), a higher tier: %s", e.pos, e.from, from, e.to, to, advice(from, to))
	}
}

// advice says what to do about an import of tier to by tier from.
func advice(from, to tier) string {
	switch {
	case to == testing_:
		return "test support is for tests only; move what the package needs out of it"
	case from == platform:
		return "a platform package knows no business; take what it needs as a parameter"
	case from == core && to == feature:
		return "the core stands under every feature; let the feature call the core, or go through a flow under internal/flow"
	case to == flow:
		return "a flow calls features, not the reverse; have the transport call the flow, and the flow call this package's service with its transaction"
	}
	return "move the call up to the package that wires both (internal/app) or a transport"
}

// TestNoFeatureImportsAnother fails when a feature imports another
// feature: a feature that needs another's effect gets it through a flow
// under internal/flow, which owns the transaction and calls both.
func TestNoFeatureImportsAnother(t *testing.T) {
	_, edges := repositoryImports(t)
	for _, e := range edges {
		if tiers[e.from] != feature || tiers[e.to] != feature {
			continue
		}
		if a, b := featureOf(e.from), featureOf(e.to); a != b {
			t.Errorf("%s: feature %s imports feature %s (%s -> %s): features never import each other; go through a flow under internal/flow that owns the transaction and calls both services",
				e.pos, a, b, e.from, e.to)
		}
	}
}
