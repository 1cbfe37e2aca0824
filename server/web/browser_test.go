package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium. A machine without it skips the
// browser tests, except in CI (CI=true), where .ci/run installs it and its
// absence is a failure.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AIRLOCK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; .ci/run installs Debian's chromium package (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); the browser tests need it")
	return ""
}

// artifactsDir is where the screenshots go: $AIRLOCK_TEST_ARTIFACTS/web
// when set (CI keeps it), else the test's temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("AIRLOCK_TEST_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, "web", t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// browser is one headless Chromium tab on the daemon's page, with what the
// test watches for: uncaught exceptions and Content-Security-Policy
// violations.
type browser struct {
	ctx    context.Context
	shots  string
	nshots int

	mu         sync.Mutex
	exceptions []string
	requests   []sentRequest // every request the page sent, in order
}

// sentRequest is a request as the page sent it.
type sentRequest struct {
	URL     string
	Headers map[string]string // names in lower case
}

// tab is the browser as one test or subtest drives it: failures go to t.
type tab struct {
	t *testing.T
	*browser
}

// on is the same tab, failing t (a subtest) instead.
func (tb tab) on(t *testing.T) tab { return tab{t, tb.browser} }

// watchScript runs in the page before its own scripts: it records every
// CSP violation, so the test can show the page needs nothing the daemon's
// "default-src 'self'" forbids.
const watchScript = `window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(e.violatedDirective + " " + e.blockedURI));`

func newTab(t *testing.T) tab {
	t.Helper()
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 1000),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	if os.Geteuid() == 0 {
		// Chromium's own sandbox refuses to start as root, and these
		// tests run as root on this machine and in CI. The page under
		// test is our own, served on loopback, and the browser reaches
		// nothing else. As any other user Chromium keeps its sandbox.
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	// One deadline for everything the browser does in one test: a hang
	// fails the test instead of the whole run.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	tb := tab{t, &browser{ctx: ctx, shots: artifactsDir(t)}}
	if err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			tb.exceptions = append(tb.exceptions, exceptionText(e))
		case *network.EventRequestWillBeSent:
			r := sentRequest{URL: e.Request.URL, Headers: map[string]string{}}
			for k, v := range e.Request.Headers {
				r.Headers[strings.ToLower(k)] = fmt.Sprint(v)
			}
			tb.requests = append(tb.requests, r)
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchScript}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.checkClean)
	return tb
}

func exceptionText(e *runtime.EventExceptionThrown) string {
	d := e.ExceptionDetails
	if d == nil {
		return "exception"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", s, d.URL, d.LineNumber)
}

// checkClean fails the test if the page threw or broke its CSP.
func (tb tab) checkClean() {
	// Not under tb.mu while the browser runs a command: the event
	// listener takes that lock in the loop that reads the answer.
	tb.mu.Lock()
	exceptions := tb.exceptions
	tb.mu.Unlock()
	for _, e := range exceptions {
		tb.t.Errorf("uncaught exception in the page: %s", e)
	}
	if tb.ctx.Err() != nil {
		return
	}
	csp, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]string](`window.__csp || []`))
	if err != nil {
		tb.t.Errorf("reading CSP violations: %v", err)
	}
	for _, v := range csp {
		tb.t.Errorf("Content-Security-Policy violation: %s", v)
	}
}

// sent returns the requests the page sent so far whose address contains
// part.
func (tb tab) sent(part string) []sentRequest {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []sentRequest
	for _, r := range tb.requests {
		if strings.Contains(r.URL, part) {
			out = append(out, r)
		}
	}
	return out
}

// do runs actions, failing the test with what was being done.
func (tb tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		tb.shot("failed-" + what)
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is true.
func (tb tab) waitFor(what, cond string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 40*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		tb.shot("failed-" + what)
		tb.t.Fatalf("waiting for %s (%s): %v", what, cond, err)
	}
}

var shotName = regexp.MustCompile(`[^a-z0-9-]+`)

// shot saves a screenshot of the whole page as an artifact.
func (tb tab) shot(name string) {
	if tb.ctx.Err() != nil {
		return
	}
	buf, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	tb.nshots++
	file := filepath.Join(tb.shots, fmt.Sprintf("%02d-%s.png", tb.nshots, shotName.ReplaceAllString(strings.ToLower(name), "-")))
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	tb.t.Logf("screenshot: %s", file)
}

// login opens the page and pastes the token into the login form.
func (tb tab) login(d *daemon, token string) {
	tb.t.Helper()
	tb.do("open the page",
		chromedp.Navigate(d.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)),
	)
}
