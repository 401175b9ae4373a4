package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/console"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestPagesCarryTheHeaders(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := console.Mount(api, "test")
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/", http.StatusFound},
		{"GET", "/console", http.StatusFound},
		{"GET", "/console/", http.StatusOK},
		{"HEAD", "/console/", http.StatusOK},
		{"GET", "/console/app.js", http.StatusOK},
		{"GET", "/console/settings.json", http.StatusOK},
		{"GET", "/console/pages/balances.js", http.StatusOK},
		{"GET", "/console/index.html", http.StatusOK},
		{"GET", "/console/missing.js", http.StatusNotFound},
		{"GET", "/console/./app.js", http.StatusNotFound},
		{"GET", "/console//app.js", http.StatusNotFound},
		{"GET", "/console/../console/app.js", http.StatusNotFound},
		{"GET", "/docs", http.StatusOK},
		{"GET", "/docs/", http.StatusFound},
		{"GET", "/docs/swagger-ui/LICENSE", http.StatusOK},
		{"DELETE", "/docs", http.StatusMethodNotAllowed},
	} {
		w := get(t, h, c.method, c.path)
		where := c.method + " " + c.path
		if w.Code != c.status {
			t.Errorf("%s → %d, want %d", where, w.Code, c.status)
		}
		if got := w.Header().Get("Content-Security-Policy"); got != console.CSP {
			t.Errorf("%s: Content-Security-Policy %q", where, got)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", where, w.Header())
		}
	}
	for env, want := range map[string]string{"test": `{"environment":"test"}`, "live": `{"environment":"live"}`} {
		if w := get(t, console.Mount(api, env), "GET", "/console/settings.json"); w.Body.String() != want {
			t.Errorf("settings in %s: %s, want %s", env, w.Body, want)
		}
	}
	// Everything else is the API's, untouched.
	for _, p := range []string{"/api/v1/me", "/healthz", "/consoles", "/docsx", "/favicon.ico"} {
		if w := get(t, h, "GET", p); w.Code != http.StatusTeapot || w.Header().Get("Content-Security-Policy") != "" {
			t.Errorf("GET %s went to the pages (%d)", p, w.Code)
		}
	}
	// A browser holding the file gets 304.
	first := get(t, h, "GET", "/console/app.js")
	req := httptest.NewRequest("GET", "/console/app.js", nil)
	req.Header.Set("If-None-Match", first.Header().Get("ETag"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusNotModified {
		t.Errorf("conditional GET → %d, want 304", w.Code)
	}
}

// The policy forbids inline script and style; none is written, and outside
// text is never put on a page as markup.
func TestNoInlineScriptOrStyle(t *testing.T) {
	inline := []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script element with a body
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`javascript:`),
	}
	markup := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|DOMParser|createContextualFragment`)
	// The shell parses each page's own static markup file, fetched from
	// the binary: the one parse allowed, in the one file.
	allowed := map[string]string{filepath.Join("assets", "console", "app.js"): "DOMParser"}
	root := filepath.Join("assets")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "swagger-ui") {
			return err // the vendored renderer is checked in the browser
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(b)
		if strings.HasSuffix(p, ".html") {
			for _, re := range inline {
				if re.MatchString(text) {
					t.Errorf("%s has inline script or style: %s", p, re.FindString(text))
				}
			}
		}
		if strings.HasSuffix(p, ".js") {
			for _, m := range markup.FindAllString(text, -1) {
				if allowed[p] != m || strings.Count(text, m) > 1 {
					t.Errorf("%s writes markup or evaluates strings: %s", p, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
