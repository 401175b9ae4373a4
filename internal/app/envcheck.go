package app

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// environKey carries the process environment the unknown-variable check reads.
type environKey struct{}

// WithEnviron makes the server check environ (KEY=VALUE entries, as
// os.Environ gives) for misspelt settings instead of the process's own
// environment: a test server configured through a getenv function of its
// own says so.
func WithEnviron(ctx context.Context, environ []string) context.Context {
	return context.WithValue(ctx, environKey{}, environ)
}

func environOf(ctx context.Context) []string {
	if e, ok := ctx.Value(environKey{}).([]string); ok {
		return e
	}
	return os.Environ()
}

// unknownVariable is a STRONGROOM_* variable that is no setting, and the
// known one its name is closest to ("" when none is close).
type unknownVariable struct {
	name, didYouMean string
}

// unknownVariables lists the STRONGROOM_* variables of environ that are
// neither a setting nor a variable of the client commands, in order, so a
// typo (STRONGROOM_DATABSE) is told instead of silently ignored. Variables
// of the tests (STRONGROOM_TEST_*) are not settings and are let be. Only
// names are read: a value may be a secret.
func unknownVariables(environ []string) []unknownVariable {
	var known []string
	for _, s := range append(slices.Clone(knownSettings), clientVariables...) {
		known = append(known, s.env)
	}
	var out []unknownVariable
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "STRONGROOM_") || strings.HasPrefix(name, "STRONGROOM_TEST_") ||
			slices.Contains(known, name) || seen[name] {
			continue
		}
		seen[name] = true
		u := unknownVariable{name: name}
		best := 3 // suggest only a name at most 2 edits away
		for _, k := range known {
			if d := editDistance(strings.ToUpper(name), k, best); d < best {
				best, u.didYouMean = d, k
			}
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b unknownVariable) int { return strings.Compare(a.name, b.name) })
	return out
}

// editDistance is the Levenshtein distance of a and b, or limit when it is
// limit or more (names longer than 100 bytes are not compared).
func editDistance(a, b string, limit int) int {
	if len(a) > 100 || len(b) > 100 {
		return limit
	}
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// warnUnknownVariables logs a warning for each unknown STRONGROOM_* variable.
func warnUnknownVariables(ctx context.Context, logger *slog.Logger) {
	for _, u := range unknownVariables(environOf(ctx)) {
		attrs := []any{"variable", u.name}
		if u.didYouMean != "" {
			attrs = append(attrs, "did_you_mean", u.didYouMean)
		}
		logger.Warn("unknown STRONGROOM_ variable ignored: it is no setting (docs/operations.md, Configuration)", attrs...)
	}
}
