// Package console serves the web pages of the service from files embedded in
// the binary: the console at /console/ (a single-page application of plain
// HTML and JavaScript modules that calls the JSON API with the person's
// session) and the browsable API reference at /docs (the OpenAPI document
// rendered by a vendored Swagger UI). Nothing is fetched from another origin,
// and every page runs under a Content-Security-Policy that admits no inline
// script or style (docs/api.md, The console).
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed assets/console assets/docs
var assets embed.FS

// CSP is the Content-Security-Policy of every console and docs response:
// scripts, styles and connections from this origin only, no plugins, no
// <base>, and no framing by another page.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// Mount returns a handler that serves the console and the reference, and
// passes every other request to api unchanged: / goes to /console/,
// /console/... and /docs... are the pages, everything else is the API's.
// environment ("test" or "live") tells the console whether to offer the
// sandbox panel.
func Mount(api http.Handler, environment string) http.Handler {
	pages := Handler(environment)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Serves(r.URL.Path) {
			pages.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// Serves reports whether p is a path of the pages rather than of the API.
func Serves(p string) bool {
	return p == "/" || p == "/console" || strings.HasPrefix(p, "/console/") || p == "/docs" || strings.HasPrefix(p, "/docs/")
}

// Handler serves the pages alone, in environment ("test" or "live").
func Handler(environment string) http.Handler {
	settings, _ := json.Marshal(struct {
		Environment string `json:"environment"`
	}{environment})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, settings) })
}

// settingsPath is what the console asks first: the deployment's environment
// (the sandbox panel is offered in "test" only). Nothing secret: the API
// keys' prefixes tell the same.
const settingsPath = "/console/settings.json"

func serve(w http.ResponseWriter, r *http.Request, settings []byte) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "This method is not allowed on this page.")
		return
	}
	p := r.URL.Path
	if p == settingsPath {
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(settings)
		}
		return
	}
	switch {
	case p == "/" || p == "/console":
		redirect(w, "/console/")
		return
	case p == "/docs/":
		redirect(w, "/docs")
		return
	case p == "/console/":
		p = "console/index.html"
	case p == "/docs":
		p = "docs/index.html"
	default:
		p = strings.TrimPrefix(p, "/")
	}
	// Only clean paths of files: no directory listings, no dot segments.
	if path.Clean("/"+p) != "/"+p || strings.HasSuffix(p, "/") || !fs.ValidPath(p) {
		plain(w, http.StatusNotFound, "There is nothing at this path.")
		return
	}
	body, err := assets.ReadFile("assets/" + p)
	if err != nil {
		plain(w, http.StatusNotFound, "There is nothing at this path.")
		return
	}
	ct := mime.TypeByExtension(path.Ext(p))
	switch path.Ext(p) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".html":
		ct = "text/html; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	// The files change with the binary: a browser asks again each time and
	// gets 304 while the ETag matches.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", etagOf(p))
	if match := r.Header.Get("If-None-Match"); match != "" && match == h.Get("ETag") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusFound)
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// etags holds each file's ETag, a digest of its bytes, made on first use.
var etags sync.Map

func etagOf(p string) string {
	if v, ok := etags.Load(p); ok {
		return v.(string)
	}
	body, _ := assets.ReadFile("assets/" + p)
	sum := sha256.Sum256(body)
	tag := `"` + hex.EncodeToString(sum[:12]) + `"`
	etags.Store(p, tag)
	return tag
}
