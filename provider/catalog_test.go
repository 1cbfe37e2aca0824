package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

// fakeDocker is a driver with the Docker provider's declared
// capabilities whose Open must never be called: loading starts nothing.
func fakeDocker(t *testing.T) provider.Driver {
	return provider.Driver{Name: "docker", Capabilities: provider.Capabilities{
		Network: []string{"none", "all"}, InputFiles: true, OutputFiles: true, Image: true,
		Budgets: []string{"memory", "cpu", "pids", "output", "scratch", "timeout"},
		Scopes:  []string{"execution", "invocation", "session"},
	}, Open: func(provider.Config) (provider.Provider, error) {
		t.Error("Open called")
		return nil, errors.New("not here")
	}}
}

const img = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseCatalogErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown key", "[sandbox.py]\nprovider = \"local\"\nmemroy = \"1GiB\"\n", "cat.toml:3: sandbox.py.memroy: unknown key"},
		{"duplicate", "[sandbox.py]\nprovider = \"local\"\n[sandbox.py]\nprovider = \"local\"\n", "cat.toml:3:"},
		{"duplicate key", "[sandbox.py]\nprovider = \"local\"\nprovider = \"local\"\n", "cat.toml:3:"},
		{"tag", "[sandbox.py]\nprovider = \"docker\"\nimage = \"python:3.12\"\n", "cat.toml:3: sandbox.py.image: \"python:3.12\" is not pinned"},
		{"bad size", "[sandbox.py]\nprovider = \"local\"\n\nmemory = \"lots\"\n", "cat.toml:4: sandbox.py.memory"},
		{"bad network", "[sandbox.py]\nprovider = \"local\"\nnetwork = \"example.com\"\n", "cat.toml:3: sandbox.py.network"},
		{"bad scope", "[sandbox.py]\nprovider = \"local\"\nscope = \"forever\"\n", "cat.toml:3:"},
		{"bad name", "[sandbox.9py]\nprovider = \"local\"\n", "cat.toml:1: \"9py\" is not a valid name"},
		{"long name", "[sandbox." + strings.Repeat("a", 48) + "]\nprovider = \"local\"\n", "not a valid name"},
		{"unknown provider", "[sandbox.py]\nprovider = \"k8s\"\n", "cat.toml:2: sandbox.py.provider: \"k8s\" is not a provider here; use one of docker, local"},
		{"unknown table", "[sandboxes.py]\nprovider = \"local\"\n", "cat.toml:1: unknown key \"sandboxes\""},
		{"capability: allowlist on docker", "[sandbox.py]\nprovider = \"docker\"\nimage = \"" + img + "\"\nnetwork = \"pypi.org:443\"\n", "cat.toml:1: [sandbox.py]: provider \"docker\" does not enforce network mode allow"},
		{"capability: image on local", "[sandbox.py]\nprovider = \"local\"\nimage = \"" + img + "\"\n", "does not enforce images"},
		{"capability: docker needs an image", "[sandbox.py]\nprovider = \"docker\"\n", "an image"},
		{"assigned unknown", "[sandbox.py]\nprovider = \"local\"\n[agent.r]\nsandboxes = [\"js\"]\n", "cat.toml:4: agent \"r\" is assigned \"js\""},
		{"bad profile", "[sandbox.py]\nprovider = \"local\"\nprofile = \"nosuch\"\n", "cat.toml:3: sandbox.py.profile: \"nosuch\" is neither a preset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.ParseCatalog("cat.toml", []byte(tc.text), provider.LocalDriver(), fakeDocker(t))
			if !errors.Is(err, provider.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant ErrConfig containing %q", err, tc.want)
			}
		})
	}
}

func TestCatalogAssignments(t *testing.T) {
	text := `
[sandbox.py]
provider = "docker"
image = "` + img + `"
timeout = "30s"
memory = "512MiB"
cpu = 1.0
pids = 64
max_output = "1MiB"
network = "none"
scope = "session"
max_scopes = 8

[sandbox.sh]
provider = "local"
network = "pypi.org:443,files.pythonhosted.org:443"

[sandbox._example]
provider = "whatever"

[agent.reviewer]
sandboxes = ["py"]

[agent.helper]
sandboxes = ["sh"]
`
	c, err := provider.ParseCatalog("cat.toml", []byte(text), provider.LocalDriver(), fakeDocker(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := len(c.Sandboxes()); n != 2 {
		t.Errorf("%d sandboxes; the _example one must be ignored", n)
	}
	rev := c.Begin(provider.Identity{Agent: "reviewer", Session: "s"})
	if l := rev.List(); len(l) != 1 || l[0].Name != "py" || l[0].Scope != "session" || l[0].Memory != 512<<20 {
		t.Errorf("reviewer sees %+v", l)
	}
	if _, err := rev.Sandbox("py"); err != nil {
		t.Errorf("assigned: %v", err)
	}
	for _, name := range []string{"sh", "nosuch", "_example"} {
		if _, err := rev.Sandbox(name); !errors.Is(err, provider.ErrNotAssigned) {
			t.Errorf("%s: %v, want ErrNotAssigned", name, err)
		}
	}
	// A child agent gets its own assignment, never the parent's.
	child := rev.Child("helper")
	if _, err := child.Sandbox("py"); !errors.Is(err, provider.ErrNotAssigned) {
		t.Errorf("child used the parent's sandbox: %v", err)
	}
	if _, err := child.Sandbox("sh"); err != nil {
		t.Errorf("child's own: %v", err)
	}
	nobody := rev.Child("stranger")
	if len(nobody.List()) != 0 {
		t.Errorf("an unassigned agent sees %v", nobody.List())
	}
	// Ending the parent ends the child; its handles are unavailable.
	h, _ := child.Sandbox("sh")
	rev.End()
	if _, err := h.Execute(context.Background(), provider.Request{Code: "echo", Lang: "sh"}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("after the parent ended: %v", err)
	}
	if _, err := child.Sandbox("sh"); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("new handle after the parent ended: %v", err)
	}
}

func TestRequestValidation(t *testing.T) {
	c, err := provider.ParseCatalog("cat.toml", []byte("[sandbox.b]\nprovider = \"local\"\n"), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, _ := c.Operator(provider.Identity{}).Sandbox("b")
	for _, req := range []provider.Request{
		{},
		{Code: "x", Argv: []string{"y"}},
		{Code: "x", Lang: "ruby"},
		{Code: "x", Files: map[string][]byte{"../escape": nil}},
		{Code: "x", Files: map[string][]byte{"a/b": nil}},
		{Code: "x", OutputFiles: []string{"/etc/passwd"}},
		{Code: "x", Network: "all"},
	} {
		if _, err := h.Execute(context.Background(), req); !errors.Is(err, provider.ErrInvalidRequest) {
			t.Errorf("%+v: %v, want ErrInvalidRequest", req, err)
		}
	}
}

func TestSanitize(t *testing.T) {
	raw := errors.New("Error response from daemon: secret=hunter2 in /home/op/.docker/config.json")
	err := provider.Sanitize("py", "create container", raw, "the container could not be created; check the daemon's log")
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "daemon:") || !errors.Is(err, provider.ErrProvider) {
		t.Errorf("sanitized: %v", err)
	}
	if errors.Is(err, raw) {
		t.Errorf("the raw daemon error is still reachable through Unwrap")
	}
}
