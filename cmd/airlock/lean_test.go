package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/binaries"
)

// TestSubcommandsAsListed: airlock's command table has every command of
// every binary (internal/binaries), and hands to another binary exactly
// the ones that binary holds: a command added to airlock-server and not
// here, or run here and listed there, fails.
func TestSubcommandsAsListed(t *testing.T) {
	cmds := subcommands()
	listed := 0
	for _, b := range binaries.All() {
		for _, c := range b.Commands {
			listed++
			sub, ok := cmds[c]
			if !ok {
				t.Errorf("%s holds %q, which airlock's subcommands lack", b.Name, c)
				continue
			}
			// Asked for its help, airlock's own command prints it; a
			// handed-off one, run where its binary is missing (beside
			// the test binary), says which binary it looked for.
			if _, err := binaryPath(b.Name, "test"); err == nil && b.Name != binaries.Airlock {
				// It would exec and replace this test process.
				t.Errorf("%s is beside the test binary; run the test from go test's own directory", b.Name)
				continue
			}
			var so, se strings.Builder
			code := sub.run([]string{"--help"}, &so, &se)
			own := code == 0 && strings.Contains(so.String(), "Usage: airlock "+c)
			handed := code == exitUsage && strings.Contains(se.String(), "this command is in "+b.Name)
			if b.Name == binaries.Airlock && !own || b.Name != binaries.Airlock && !handed {
				t.Errorf("airlock %s --help: exit %d, stdout %.80q, stderr %q; internal/binaries has it in %s", c, code, so.String(), se.String(), b.Name)
			}
		}
	}
	if listed != len(cmds) {
		t.Errorf("airlock has %d subcommands, internal/binaries lists %d: each command is held by one binary, listed there", len(cmds), listed)
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
var lazyPackages = []string{"shell", "profile", "audit", "workspace", "rules", "gate", "tool", "sandbox", "integrations/claudecode", "internal/cli", "internal/binaries"}

// TestLazyInits fails on a package-level variable of lazyPackages that
// is computed at init: a compiled regexp, a map literal of more than 16
// entries (a few small ones cost less than a OnceValue's closure), a
// call of a function literal, of strings.Fields or of fmt's formatting
// (an error made with fmt.Errorf: write errors.New's text, or wrap at
// the use). Build them with sync.OnceValue, or write a function (a
// switch, a loop) instead.
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
	if eagerInit(&ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent("fmt"), Sel: ast.NewIdent("Errorf")}}) == "" {
		t.Fatal("eagerInit misses fmt.Errorf")
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
				case "regexp.MustCompile", "regexp.Compile", "regexp.MustCompilePOSIX", "strings.Fields", "strings.Split",
					// fmt's first use at init faults its code in and
					// builds a printer: 25-30 us of every start, where
					// package sandbox's three fmt.Errorf variables cost
					// that (perf record of the hook).
					"fmt.Errorf", "fmt.Sprintf", "fmt.Sprint", "fmt.Sprintln":
					return "a " + pkg.Name + "." + sel.Sel.Name + " call"
				}
			}
		}
	}
	return ""
}
