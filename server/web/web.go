// Package web holds the daemon's approval page: static files embedded in the
// binary, so the page needs no build step and fetches nothing at run time.
// Handler serves them with the headers that keep the page's guarantees in
// the browser: the Content-Security-Policy that lets only these files run
// and refuses framing by another site. The HTTP API the page calls is
// package server's.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// FS returns the page's files, rooted so that "index.html" is the page.
func FS() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the directory is embedded above; it cannot be missing
	}
	return sub
}

// ContentSecurityPolicy is the policy the page is written for: its own
// scripts, styles, images and API only, no inline code (an agent's input
// that slipped into markup could not run), no other site framing it (a
// page that framed it could trick a click on "Always allow"), no <base> or
// form posted elsewhere.
const ContentSecurityPolicy = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// Handler serves the page's files with ContentSecurityPolicy, a refusal to
// be framed for browsers that predate frame-ancestors, and no Referer.
func Handler() http.Handler {
	files := http.FileServerFS(FS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}
