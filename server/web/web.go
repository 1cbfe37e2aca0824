// Package web holds the daemon's approval page: static files embedded in the
// binary, so the page needs no build step and fetches nothing at run time.
package web

import (
	"embed"
	"io/fs"
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
