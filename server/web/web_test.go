package web_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/server/web"
)

// The page must work under "Content-Security-Policy: default-src 'self'"
// and fetch nothing from elsewhere, and data must never become markup.
// These checks read the embedded files; TestBrowserApprovals shows the same
// in a browser.
var forbidden = []struct {
	ext  string
	re   *regexp.Regexp
	why  string
	skip func(match string) bool
}{
	{".html", regexp.MustCompile(`(?is)<script\b[^>]*>`), "inline script (CSP forbids it)",
		func(m string) bool { return strings.Contains(m, " src=") }},
	{".html", regexp.MustCompile(`(?i)\son[a-z]+\s*=`), "inline event handler (CSP forbids it)", nil},
	{".html", regexp.MustCompile(`(?i)\sstyle\s*=|<style\b`), "inline style (CSP forbids it)", nil},
	{"", regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`), "a resource from another site",
		// an XML namespace is a name, not something fetched
		func(m string) bool { return strings.HasSuffix(m, "//www.w3.org/") }},
	{".css", regexp.MustCompile(`(?i)@import|url\(`), "a stylesheet or image loaded from CSS", nil},
	{".js", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function`), "data turned into markup or code", nil},
	{".js", regexp.MustCompile(`new EventSource|[?&]token=`), "a token in an address", nil},
}

func TestPageHasNoInlineCode(t *testing.T) {
	files := 0
	err := fs.WalkDir(web.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.FS(), path)
		if err != nil {
			return err
		}
		files++
		for _, f := range forbidden {
			if f.ext != "" && !strings.HasSuffix(path, f.ext) {
				continue
			}
			for _, m := range f.re.FindAllString(stripComments(path, string(b)), -1) {
				if f.skip != nil && f.skip(m) {
					continue
				}
				t.Errorf("%s: %q is %s", path, m, f.why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(web.FS(), "index.html"); err != nil {
		t.Errorf("the page has no index.html: %v", err)
	}
	if files < 5 {
		t.Errorf("only %d files embedded", files)
	}
}

// stripComments drops comments, which may mention what the code avoids.
func stripComments(path, s string) string {
	switch {
	case strings.HasSuffix(path, ".js"):
		s = regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(s, "")
	case strings.HasSuffix(path, ".html"):
		s = regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(s, "")
	}
	return regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(s, "")
}

// TestHandlerHeaders: the page is served with the policy it is written
// for, and its scripts with a JavaScript type (a module script of any
// other type does not run).
func TestHandlerHeaders(t *testing.T) {
	ts := httptest.NewServer(web.Handler())
	defer ts.Close()
	for path, ctype := range map[string]string{"/": "text/html", "/main.js": "javascript", "/app.css": "text/css"} {
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d %q, want 200 and %s", path, res.StatusCode, res.Header.Get("Content-Type"), ctype)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
		if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q", path, got)
		}
	}
}
