package mcp

// The file tools do their IO inside the sandbox, with the same profile as
// run_command, through small system programs (cat, find, sh). Doing it in
// the supervisor would be faster, but it would need its own copy of every
// boundary the sandbox enforces (the mount view, deny globs and files that
// appear later, protected paths, symlinks planted in the workspace); in
// the sandbox the kernel enforces the same boundary for a file tool as for
// a command, so a gate mistake cannot reach further than run_command could.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/sandbox"
)

// writeScript writes stdin to "$1", creating missing parent directories.
const writeScript = `mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`

func (s *Server) readFile(ctx context.Context, req *sdk.CallToolRequest, in readFileArgs) (*sdk.CallToolResult, Outcome, error) {
	p, err := s.path(in.Path)
	if err != nil {
		return nil, Outcome{}, err
	}
	return s.call(ctx, req, "Read", map[string]any{"file_path": p}, func(ctx context.Context, id string) Outcome {
		res, err := s.exec(ctx, id, "read_file", []string{"cat", "--", p}, nil, nil, 0)
		return fileOutcome(res, err, func(res *sandbox.Result) string { return string(res.Stdout) })
	})
}

func (s *Server) writeFile(ctx context.Context, req *sdk.CallToolRequest, in writeFileArgs) (*sdk.CallToolResult, Outcome, error) {
	p, err := s.path(in.Path)
	if err != nil {
		return nil, Outcome{}, err
	}
	return s.call(ctx, req, "Write", map[string]any{"file_path": p, "content": in.Content}, func(ctx context.Context, id string) Outcome {
		return s.write(ctx, id, "write_file", p, in.Content)
	})
}

func (s *Server) write(ctx context.Context, id, toolName, p, content string) Outcome {
	res, err := s.exec(ctx, id, toolName, []string{"sh", "-c", writeScript, "airlock-write", p}, strings.NewReader(content), nil, 0)
	return fileOutcome(res, err, func(*sandbox.Result) string {
		return fmt.Sprintf("wrote %d bytes to %s", len(content), p)
	})
}

func (s *Server) editFile(ctx context.Context, req *sdk.CallToolRequest, in editFileArgs) (*sdk.CallToolResult, Outcome, error) {
	p, err := s.path(in.Path)
	if err != nil {
		return nil, Outcome{}, err
	}
	if in.OldString == "" {
		return nil, Outcome{}, fmt.Errorf("old_string is empty; give the exact text to replace (write_file replaces a whole file)")
	}
	input := map[string]any{"file_path": p, "old_string": in.OldString, "new_string": in.NewString}
	return s.call(ctx, req, "Edit", input, func(ctx context.Context, id string) Outcome {
		res, err := s.exec(ctx, id, "edit_file", []string{"cat", "--", p}, nil, nil, 0)
		if res == nil || res.Status != sandbox.StatusSucceeded {
			return fileOutcome(res, err, nil)
		}
		text := string(res.Stdout)
		switch n := strings.Count(text, in.OldString); n {
		case 1:
		case 0:
			return Outcome{Status: string(sandbox.StatusFailed), ExitCode: 1, Denials: []Denial{},
				Reason: "old_string does not occur in " + p + "; read the file and copy the text exactly"}
		default:
			return Outcome{Status: string(sandbox.StatusFailed), ExitCode: 1, Denials: []Denial{},
				Reason: fmt.Sprintf("old_string occurs %d times in %s; include more of the surrounding text so it occurs once", n, p)}
		}
		o := s.write(ctx, id, "edit_file", p, strings.Replace(text, in.OldString, in.NewString, 1))
		if o.Status == string(sandbox.StatusSucceeded) {
			o.Output = "edited " + p
		}
		return o
	})
}

func (s *Server) listDirectory(ctx context.Context, req *sdk.CallToolRequest, in listDirectoryArgs) (*sdk.CallToolResult, Outcome, error) {
	p, err := s.path(in.Path)
	if err != nil {
		return nil, Outcome{}, err
	}
	return s.call(ctx, req, "Glob", map[string]any{"pattern": "*", "path": p}, func(ctx context.Context, id string) Outcome {
		argv := []string{"find", p, "-mindepth", "1", "-maxdepth", "1", "-printf", `%y\t%s\t%f\n`}
		res, err := s.exec(ctx, id, "list_directory", argv, nil, nil, 0)
		return fileOutcome(res, err, func(res *sandbox.Result) string { return listing(string(res.Stdout), onHost(p)) })
	})
}

// onHost reports whether a name listed in dir inside the sandbox is there
// on the host once the run has ended. The sandbox holds names the run
// must not create (.git, .env, ...) with placeholders of its own while it
// runs; they are not the workspace's, and a model told they exist would
// go looking for them.
func onHost(dir string) func(name string) bool {
	return func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
}

// listing formats find's "TYPE\tSIZE\tNAME" lines, sorted by name:
// directories end in "/", files show their size. Names exists rejects
// are left out.
func listing(out string, exists func(name string) bool) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var entries []string
	for _, l := range lines {
		typ, rest, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		size, name, _ := strings.Cut(rest, "\t")
		if !exists(name) {
			continue
		}
		switch typ {
		case "d":
			entries = append(entries, name+"/")
		case "l":
			entries = append(entries, name+"@")
		case "f":
			entries = append(entries, name+"\t"+size+" bytes")
		default:
			entries = append(entries, name)
		}
	}
	sort.Strings(entries)
	if len(entries) == 0 {
		return "(empty directory)"
	}
	return strings.Join(entries, "\n") + "\n"
}

// fileOutcome is the Outcome of a file tool's run: output from ok when it
// succeeded, else the program's error message as the reason.
func fileOutcome(res *sandbox.Result, err error, ok func(*sandbox.Result) string) Outcome {
	o := outcomeOf(res, err)
	if res == nil {
		return o
	}
	if res.Status == sandbox.StatusSucceeded {
		if ok != nil {
			o.Output = ok(res)
		}
		return o
	}
	if msg := strings.TrimSpace(string(res.Stderr)); msg != "" {
		o.Reason = msg
	}
	return o
}
