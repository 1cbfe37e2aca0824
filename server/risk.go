package server

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/tool"
)

// Risk is a mark on an approval: something about the call that a person
// should see before allowing it, because the call's text alone hides it.
type Risk struct {
	// Code is one of the Risk* constants.
	Code string `json:"code"`
	// Text says what it is, in words for the person.
	Text string `json:"text"`
}

// The marks the approval page shows.
const (
	// RiskRuntime: parts of the call are only known when it runs.
	RiskRuntime = "runtime"
	// RiskUnparsed: the shell parser could not read the command.
	RiskUnparsed = "unparsed"
	// RiskDownloadExec: what is downloaded is run as code (curl | sh).
	RiskDownloadExec = "download_exec"
	// RiskDecodeExec: decoded base64 is run as code (base64 -d | sh,
	// eval "$(... | base64 -d)").
	RiskDecodeExec = "decode_exec"
	// RiskDeniedPath: the call may read a path the profile denies.
	RiskDeniedPath = "denied_path"
)

// shells are the programs that run code they read from stdin or get as
// an argument.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "busybox": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true,
	"eval": true, "source": true, ".": true,
}

// downloaders fetch from the network to stdout.
var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true}

// callRisks marks the call's hidden parts: requirements only known at
// run time, a shell command that runs what it downloads or decodes, and
// reads that may reach a path the profile denies.
func callRisks(c tool.Call, reqs []tool.Requirement, prof gate.ProfileAccess, home string) []Risk {
	var out []Risk
	add := func(code, text string) {
		for _, r := range out {
			if r.Code == code {
				return
			}
		}
		out = append(out, Risk{Code: code, Text: text})
	}
	for _, r := range reqs {
		switch {
		case r.Unparsed:
			add(RiskUnparsed, "The shell parser could not read this command, so airlock cannot say what it does.")
		case r.Shape != "" || r.Unresolved:
			add(RiskRuntime, "Parts of this call are only known when it runs (a variable, a command substitution, a glob): what it touches may not be what it shows.")
		}
	}
	if c.Tool == "Bash" || c.Tool == "Monitor" {
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(c.Input, &in) == nil && in.Command != "" {
			download, decode := shellRisks(in.Command)
			if download {
				add(RiskDownloadExec, "It runs what it downloads as code (a download piped or substituted into a shell): what runs is whatever the server sends.")
			}
			if decode {
				add(RiskDecodeExec, "It decodes base64 and runs the result as code: what runs is not what the command shows.")
			}
		}
	}
	if prof != nil {
		for _, r := range reqs {
			if r.Kind != tool.KindFilesystemRead {
				continue
			}
			if p := deniedName(r, prof, home, c.Workspace); p != "" {
				add(RiskDeniedPath, fmt.Sprintf("It may read %s, which the profile denies.", p))
			}
		}
	}
	return out
}

// deniedName returns a name of the read r that the profile denies: its
// target and other names, and for a path only known at run time, the
// path with its unknown start filled in: the workspace for $PWD, else
// the home directory ($HOME, ~, or a variable that could hold it).
func deniedName(r tool.Requirement, prof gate.ProfileAccess, home, ws string) string {
	names := append([]string{r.Target}, r.Names...)
	if r.Shape != "" {
		base := home
		for _, v := range []string{"$PWD", "${PWD}"} {
			if strings.HasPrefix(r.Target, v) {
				base = ws
			}
		}
		if base != "" {
			names = append(names, path.Clean(strings.ReplaceAll(r.Shape, string(tool.Hole), base)))
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "/") && !strings.ContainsRune(n, tool.Hole) && prof.Access(tool.KindFilesystemRead, n) == profile.AccessDeny {
			return n
		}
	}
	return ""
}

// shellRisks parses a shell command and reports whether it runs what it
// downloads, or what it decodes from base64, as code: a pipe from a
// downloader or "base64 -d" into a shell, or their output substituted
// into a shell's argument (eval "$(...)", bash -c "$(...)", source
// <(...)).
func shellRisks(src string) (download, decode bool) {
	file, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return false, false
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op != syntax.Pipe && n.Op != syntax.PipeAll {
				break
			}
			if prog, args := firstCall(n.Y); shells[prog] && readsStdin(prog, args) {
				d, b := feeds(n.X)
				download, decode = download || d, decode || b
			}
		case *syntax.CallExpr:
			prog, args := callName(n)
			if !shells[prog] {
				break
			}
			// eval and source run their arguments; a shell runs its -c
			// argument, or a script given as <(...).
			code := prog == "eval" || prog == "source" || prog == "."
			for _, a := range args {
				code = code || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")
			}
			for _, w := range n.Args[1:] {
				if !code && !procSubst(w) {
					continue
				}
				d, b := feeds(w)
				download, decode = download || d, decode || b
			}
		}
		return true
	})
	return download, decode
}

// procSubst reports whether the word is a process substitution, <(...).
func procSubst(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.ProcSubst); ok {
			return true
		}
	}
	return false
}

// feeds reports whether a downloader or "base64 -d" runs anywhere in n.
func feeds(n syntax.Node) (download, decode bool) {
	syntax.Walk(n, func(m syntax.Node) bool {
		if call, ok := m.(*syntax.CallExpr); ok {
			prog, args := callName(call)
			download = download || downloaders[prog]
			decode = decode || prog == "base64" && decodes(args) || prog == "openssl" && strings.Contains(strings.Join(args, " "), "base64")
		}
		return true
	})
	return download, decode
}

// firstCall is the first simple command of a pipeline's right side.
func firstCall(n syntax.Node) (string, []string) {
	var prog string
	var args []string
	syntax.Walk(n, func(m syntax.Node) bool {
		if prog != "" {
			return false
		}
		if call, ok := m.(*syntax.CallExpr); ok {
			prog, args = callName(call)
			return false
		}
		return true
	})
	return prog, args
}

// callName is a simple command's program (the last path element, past
// sudo, env and exec) and its literal arguments.
func callName(call *syntax.CallExpr) (string, []string) {
	var words []string
	for _, w := range call.Args {
		words = append(words, w.Lit())
	}
	for len(words) > 0 {
		switch path.Base(words[0]) {
		case "sudo", "env", "exec", "command", "nohup", "time":
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
				words = words[1:]
			}
			continue
		}
		break
	}
	if len(words) == 0 {
		return "", nil
	}
	return path.Base(words[0]), words[1:]
}

// readsStdin reports whether a shell given args runs its stdin: no
// script operand, or "-" / "-s".
func readsStdin(prog string, args []string) bool {
	if prog == "eval" || prog == "source" || prog == "." {
		return false // they take code as arguments, not from stdin
	}
	for _, a := range args {
		if a == "-" || a == "-s" {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

func decodes(args []string) bool {
	for _, a := range args {
		if a == "-d" || a == "--decode" || a == "-D" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "d") {
			return true
		}
	}
	return false
}
