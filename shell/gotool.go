package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// goValueFlags are the go command's flags that take a value (the build
// flags and go test's own); every other flag is a boolean. The go
// command reads "-flag value", "-flag=value" and the same with "--".
var goValueFlags = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"C": true, "p": true, "asmflags": true, "buildmode": true, "compiler": true, "gccgoflags": true,
		"gcflags": true, "installsuffix": true, "ldflags": true, "mod": true, "modfile": true, "overlay": true,
		"pgo": true, "pkgdir": true, "tags": true, "toolexec": true, "o": true, "covermode": true,
		"coverpkg": true, "exec": true, "vettool": true, "run": true, "bench": true, "count": true, "cpu": true,
		"timeout": true, "parallel": true, "benchtime": true, "coverprofile": true, "cpuprofile": true,
		"memprofile": true, "memprofilerate": true, "blockprofile": true, "blockprofilerate": true,
		"mutexprofile": true, "mutexprofilefraction": true, "outputdir": true, "trace": true, "list": true,
		"skip": true, "shuffle": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true,
		"debug-actiongraph": true, "debug-trace": true, "debug-runtime-trace": true, "w": true, "u": true,
		"f": true,
	}
}}

// goFlag is one flag of a go command line.
type goFlag struct {
	name  string
	value shWord
	set   bool // a value was given
}

// goFlags reads the flags of "go SUB ...": go test reads its flags
// anywhere before -args, the other subcommands up to the first operand
// (go run's later words are the program's own).
func goFlags(sub string, args []shWord) []goFlag {
	var out []goFlag
	for i := 0; i < len(args); i++ {
		a, lit := args[i].knownPrefix(), args[i].known()
		if !lit && !strings.Contains(a, "=") {
			continue
		}
		if a == "--" || sub == "test" && (a == "-args" || a == "--args") {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if sub == "test" {
				continue
			}
			break
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		f := goFlag{name: name}
		if k, _, eq := strings.Cut(name, "="); eq {
			f.name, f.value, f.set = k, args[i].slice(len(a)-len(name)+len(k)+1), true
		} else if goValueFlags.get()[name] && i+1 < len(args) {
			i++
			f.value, f.set = args[i], true
		}
		out = append(out, f)
	}
	return out
}

// goPrograms: options of the go command that act. -toolexec runs a
// program for every tool invocation of a build, go test and go run's
// -exec run the binaries through a program, and go vet's -vettool is the
// analysis program: each is an execution of that program (go splits the
// value into words itself). -o and go test's profile flags write the file
// they name. "go env -w" and "-u" change the go env file
// ($HOME/.config/go/env), which every later go command reads (GOFLAGS,
// CC, GOTOOLCHAIN can make it run programs): a write of that file. What
// a package's code or a go:generate line runs, the gate cannot see; the
// sandbox bounds it.
func goPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	i := 0
	for ; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit {
			return
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		if a == "-C" || a == "--C" {
			if i+1 < len(args) {
				i++
				in = chdir(in, args[i])
			}
		} else if strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C=") {
			in = chdir(in, args[i].slice(strings.IndexByte(a, '=')+1))
		}
	}
	if i >= len(args) {
		return
	}
	sub, _ := args[i].literal()
	via := name + " " + sub
	flags := goFlags(sub, args[i+1:])
	if sub == "env" {
		for _, f := range flags {
			if f.name == "w" || f.name == "u" {
				w.pathRequirements(tool.KindFilesystemWrite, literalWord(w.home+"/.config/go/env"), in, via+" -"+f.name)
				return
			}
		}
		return
	}
	for _, f := range flags {
		if !f.set {
			continue
		}
		switch f.name {
		case "toolexec", "exec", "vettool":
			w.runLater(program{word: f.value, shell: true, via: via + " -" + f.name}, in)
		case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace":
			if sub == "build" || sub == "test" || sub == "install" && f.name != "o" {
				w.pathRequirements(tool.KindFilesystemWrite, f.value, in, via+" -"+f.name)
			}
		case "modfile", "overlay", "pgo":
			w.pathRequirements(tool.KindFilesystemRead, f.value, in, via+" -"+f.name)
		}
	}
}
