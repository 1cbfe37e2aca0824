package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// heavyImports are what airlock-server links and airlock must not: every
// start of airlock (one per tool call: run, hook) pays the package inits
// and page faults of everything linked, and these are most of them (the
// Docker client's regexps alone were 1 ms).
var heavyImports = []string{
	"github.com/airlockhq/airlock/provider/docker",
	"github.com/airlockhq/airlock/server",
	"github.com/airlockhq/airlock/integrations/mcp",
	"github.com/moby/",
	"github.com/docker/",
	"github.com/containerd/",
	"github.com/opencontainers/",
	"github.com/jackc/",
	"modernc.org/",
	"github.com/modelcontextprotocol/",
	"github.com/google/jsonschema-go",
	"go.opentelemetry.io/",
	"net/http",
	"encoding/gob",
}

// TestLeanImports keeps the heavy modules in airlock-server: a new import
// of the run or hook path that pulls one back in fails here, with the
// package that brought it.
func TestLeanImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/airlockhq/airlock/sandbox\n") {
		t.Fatalf("go list -deps lists no airlock/sandbox: the check reads the wrong output:\n%s", out)
	}
	for _, d := range deps {
		for _, h := range heavyImports {
			if d == h || strings.HasPrefix(d, h) && (strings.HasSuffix(h, "/") || strings.HasPrefix(d, h+"/")) {
				t.Errorf("airlock imports %s: it belongs in airlock-server (cmd/airlock-server); 'go mod why -m' or 'go list -deps -f {{.ImportPath}}:{{.Imports}}' shows through what", d)
			}
		}
	}
	// The control: the same check finds them in airlock-server.
	out, err = exec.Command("go", "list", "-deps", "../airlock-server").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ../airlock-server: %v: %s", err, out)
	}
	for _, h := range []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5", "github.com/modelcontextprotocol/go-sdk/mcp", "github.com/airlockhq/airlock/provider/docker"} {
		if !strings.Contains(string(out), h+"\n") {
			t.Errorf("airlock-server does not import %s: the heavy list above names what is no longer there", h)
		}
	}
}

// TestHandOff: mcp, exec and serve typed to airlock run in airlock-server
// (the usage error, the help and the exit status are the server's), and
// without airlock-server beside it airlock says what to build, status 125.
func TestHandOff(t *testing.T) {
	bin := buildAirlock(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp"}, 125, "name a command: proxy, serve"},
		{[]string{"mcp", "serve", "--bogus"}, 125, "unknown flag --bogus; run 'airlock mcp serve --help'"},
		{[]string{"exec", "--timeout", "30"}, 125, "use 30s"},
		{[]string{"serve", "--bogus"}, 125, "unknown flag --bogus"},
		{[]string{"mcp", "--help"}, 0, ""},
		{[]string{"help", "serve"}, 0, ""},
	} {
		code, so, se := runCLI(t, bin, tc.args...)
		if code != tc.code || !strings.Contains(se, tc.want) {
			t.Errorf("airlock %q: exit %d, stderr %q; want %d and %q", tc.args, code, se, tc.code, tc.want)
		}
		if tc.code == 0 && !strings.Contains(so, "Usage: airlock "+tc.args[len(tc.args)-1]) && !strings.Contains(so, "Usage: airlock "+tc.args[0]) {
			t.Errorf("airlock %q: stdout %.100q; want the command's help", tc.args, so)
		}
	}
	// Alone in its directory (a symlink beside a server does not count:
	// the server is looked for beside the real file).
	alone := filepath.Join(t.TempDir(), "airlock")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(bin), "airlock-link")
	if err := os.Symlink(alone, link); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{alone, link} {
		code, so, se := runCLI(t, b, "mcp", "serve", "--bogus")
		if code != 125 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, "airlock-server") || !strings.Contains(se, "go build -o DIR/ ./cmd/...") {
			t.Errorf("%s mcp serve without airlock-server: exit %d, stdout %q, stderr %q; want 125 and one line saying how to build it", b, code, so, se)
		}
	}
	// run and hook do not need it.
	if code, _, se := runCLI(t, alone, "run", "--", "true"); code != 0 {
		t.Errorf("airlock run without airlock-server: exit %d, stderr %q", code, se)
	}
}

// lazyPackages are airlock packages every airlock process initialises
// (the hook's and the run's path) whose package-level tables are built at
// first use: a package variable is computed at each start, whatever the
// subcommand runs.
var lazyPackages = []string{"shell", "profile", "audit", "workspace", "rules", "gate", "integrations/claudecode"}

// TestLazyInits fails on a package-level variable of lazyPackages that
// is computed at init: a compiled regexp, a map literal of more than 16
// entries (a few small ones cost less than a OnceValue's closure), a
// call of a function literal or of strings.Fields. Build them with
// sync.OnceValue, or write a function (a switch, a loop) instead.
func TestLazyInits(t *testing.T) {
	fset := token.NewFileSet()
	found := 0
	for _, pkg := range lazyPackages {
		files, err := filepath.Glob(filepath.Join("..", "..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s (%v): the list above names a package that moved", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, sp := range g.Specs {
					for _, v := range sp.(*ast.ValueSpec).Values {
						found++
						if why := eagerInit(v); why != "" {
							t.Errorf("%s: a package variable is %s at every airlock start; build it with sync.OnceValue", fset.Position(v.Pos()), why)
						}
					}
				}
			}
		}
	}
	// The control: the check sees variables at all, and knows an eager one.
	if found == 0 {
		t.Fatal("no package variables found: the check reads nothing")
	}
	if eagerInit(&ast.CompositeLit{Type: &ast.MapType{}, Elts: make([]ast.Expr, 17)}) == "" {
		t.Fatal("eagerInit misses a map literal")
	}
}

// eagerInit says what in a package variable's initialiser runs at init,
// or "".
func eagerInit(v ast.Expr) string {
	switch x := v.(type) {
	case *ast.CompositeLit:
		if _, ok := x.Type.(*ast.MapType); ok && len(x.Elts) > 16 {
			return "a map of " + strconv.Itoa(len(x.Elts)) + " entries built"
		}
	case *ast.CallExpr:
		if _, ok := x.Fun.(*ast.FuncLit); ok {
			return "a function literal called"
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok {
				switch pkg.Name + "." + sel.Sel.Name {
				case "regexp.MustCompile", "regexp.Compile", "regexp.MustCompilePOSIX", "strings.Fields", "strings.Split":
					return "a " + pkg.Name + "." + sel.Sel.Name + " call"
				}
			}
		}
	}
	return ""
}
