package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/syncbuf"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// ServerOptions configure [NewServer].
type ServerOptions struct {
	// Gate decides every call. Its Profile's workspace is the server's
	// workspace.
	Gate
	// Executor runs every allowed call. It should confine with Gate.Profile,
	// the profile the gate decided with.
	Executor *sandbox.Executor
	// Version is reported to clients as the server's version.
	Version string
}

// Server is airlock's MCP server: five tools, each decided by the gate and
// carried out in the sandbox.
type Server struct {
	g   *gatekeeper
	ex  *sandbox.Executor
	ws  string
	mcp *sdk.Server
}

// The tools' arguments, exactly as MCP clients send them.
type (
	runCommandArgs struct {
		Command        string  `json:"command" jsonschema:"the shell command, run with bash -c in the workspace inside the sandbox"`
		TimeoutSeconds float64 `json:"timeout_seconds,omitempty" jsonschema:"stop the command after this many seconds (default: the profile's wall-time budget)"`
	}
	readFileArgs struct {
		Path string `json:"path" jsonschema:"the file, relative to the workspace or absolute"`
	}
	writeFileArgs struct {
		Path    string `json:"path" jsonschema:"the file, relative to the workspace or absolute; missing parent directories are created"`
		Content string `json:"content" jsonschema:"the whole new content of the file"`
	}
	editFileArgs struct {
		Path      string `json:"path" jsonschema:"the file, relative to the workspace or absolute"`
		OldString string `json:"old_string" jsonschema:"the exact text to replace; it must occur exactly once in the file"`
		NewString string `json:"new_string" jsonschema:"the text to put in its place"`
	}
	listDirectoryArgs struct {
		Path string `json:"path" jsonschema:"the directory, relative to the workspace or absolute"`
	}
)

// NewServer returns the server. Serve it with [Server.ServeStdio] or
// [Server.HTTPHandler].
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Profile == nil || opts.Executor == nil {
		return nil, errors.New("mcp: a server needs a Profile and an Executor")
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Server{g: newGatekeeper(opts.Gate), ex: opts.Executor, ws: opts.Profile.Workspace()}
	// Every tool runs in the sandbox, as the Claude Code tool it is
	// decided as: a command no rule mentions needs no prompt there.
	s.g.confined = []string{"Bash", "Read", "Write", "Edit", "Glob"}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "airlock", Version: version}, &sdk.ServerOptions{
		Instructions: "Every tool call is decided by airlock's gate and runs in a sandbox confined to the workspace " + s.ws +
			". A call that is not allowed returns an error result whose text says why; do not retry it unchanged.",
	})
	refuseFailedAsks(s.mcp)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "run_command", Description: "Run a shell command (bash -c) in the workspace, inside airlock's sandbox. Returns status, exit code and the combined output."}, s.runCommand)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "read_file", Description: "Read a text file."}, s.readFile)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "write_file", Description: "Create or overwrite a file with the given content."}, s.writeFile)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "edit_file", Description: "Replace one exact occurrence of old_string with new_string in a file."}, s.editFile)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "list_directory", Description: "List the entries of a directory."}, s.listDirectory)
	return s, nil
}

// MCPServer returns the underlying SDK server, for other transports.
func (s *Server) MCPServer() *sdk.Server { return s.mcp }

// ServeStdio serves one client on the process's stdin and stdout until
// the client disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &sdk.StdioTransport{})
}

// HTTPHandler serves clients over MCP's streamable HTTP transport. Requests
// that arrive on a loopback address with another Host (DNS rebinding) and
// cross-origin browser requests are refused.
func (s *Server) HTTPHandler() http.Handler {
	return HTTPHandler(s.mcp)
}

// HTTPHandler serves srv over MCP's streamable HTTP transport, refusing DNS
// rebinding and cross-origin browser requests.
func HTTPHandler(srv *sdk.Server) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	return http.NewCrossOriginProtection().Handler(h)
}

// call decides the call of Claude Code's tool claudeTool with input and,
// when allowed, carries it out with run.
func (s *Server) call(ctx context.Context, req *sdk.CallToolRequest, claudeTool string, input any,
	run func(ctx context.Context, id string) Outcome) (*sdk.CallToolResult, Outcome, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, Outcome{}, err
	}
	id := newExecutionID()
	call := tool.Call{Tool: claudeTool, Input: raw, Workspace: s.ws, ExecutionID: id}
	v := s.g.decide(ctx, req, call)
	if v.Result != nil {
		if v.Result.InputRequests != nil {
			return v.Result, Outcome{}, nil
		}
		return v.Result, gateDenial(v.Decision), nil
	}
	out := run(ctx, id)
	if out.Denials == nil {
		out.Denials = []Denial{}
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: outcomeText(out)}}}
	res.IsError = out.Status != string(sandbox.StatusSucceeded)
	return res, out, nil
}

// outcomeText is the text a model reads for a call that ran.
func outcomeText(out Outcome) string {
	var b strings.Builder
	b.WriteString(out.Output)
	if out.Status != string(sandbox.StatusSucceeded) {
		if out.Output != "" && !strings.HasSuffix(out.Output, "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[status %s, exit code %d", out.Status, out.ExitCode)
		if out.Reason != "" {
			b.WriteString(": " + out.Reason)
		}
		b.WriteString("]")
	}
	for _, d := range out.Denials {
		fmt.Fprintf(&b, "\n[airlock %s refused %s %s: %s]", d.Source, d.Kind, d.Target, d.Reason)
	}
	return b.String()
}

func (s *Server) runCommand(ctx context.Context, req *sdk.CallToolRequest, in runCommandArgs) (*sdk.CallToolResult, Outcome, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, Outcome{}, errors.New("command is empty; give the shell command to run")
	}
	if in.TimeoutSeconds < 0 {
		return nil, Outcome{}, errors.New("timeout_seconds must be positive")
	}
	timeout := time.Duration(in.TimeoutSeconds * float64(time.Second))
	return s.call(ctx, req, "Bash", map[string]any{"command": in.Command}, func(ctx context.Context, id string) Outcome {
		var out syncbuf.Buffer
		res, err := s.exec(ctx, id, "run_command", []string{"bash", "-c", in.Command}, nil, &out, timeout)
		o := outcomeOf(res, err)
		o.Output = out.String()
		return o
	})
}

// path makes a tool's path argument absolute against the workspace.
func (s *Server) path(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("path is empty; give a path relative to the workspace or absolute")
	case p == "~" || strings.HasPrefix(p, "~/"):
		return "", fmt.Errorf("path %q: ~ is not expanded; give a path relative to the workspace (%s) or absolute", p, s.ws)
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(s.ws, p), nil
}

// exec runs argv in the sandbox, in the workspace, and records the run.
// With a nil stdout the output is kept in the Result.
func (s *Server) exec(ctx context.Context, id, toolName string, argv []string, stdin io.Reader, stdout io.Writer, timeout time.Duration) (*sandbox.Result, error) {
	cmd := sandbox.Cmd{Args: argv, Dir: s.ws, Stdin: stdin, Stdout: stdout, Stderr: stdout, Timeout: timeout, ExecutionID: id}
	res, err := s.ex.Run(ctx, cmd)
	s.g.recordRun(id, "mcp "+toolName, strings.Join(argv, " "), res, err)
	return res, err
}

// outcomeOf is the Outcome of a run, without its output.
func outcomeOf(res *sandbox.Result, err error) Outcome {
	if res == nil {
		reason := "the sandbox could not run the call"
		if err != nil {
			reason += ": " + err.Error()
		}
		return Outcome{Status: "error", ExitCode: -1, Denials: []Denial{}, Reason: reason}
	}
	o := Outcome{Status: string(res.Status), ExitCode: res.ExitCode, Denials: []Denial{}}
	for _, d := range res.Denials {
		o.Denials = append(o.Denials, Denial{Source: "sandbox", Kind: d.Kind, Target: d.Target, Reason: d.Reason})
	}
	return o
}
