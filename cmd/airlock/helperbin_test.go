package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestRunHelperBinary: airlock execs the airlock-sandbox of its own build
// as the sandbox's helpers, and never a file of another build in its
// place. The sandbox's pid 1 is the stage-2 helper: its comm is "exe"
// when airlock re-executed itself (/proc/self/exe) and the descriptor's
// number when it execed airlock-sandbox (/proc/self/fd/N). A foreign
// helper would create a marker file on the host; the run must still
// work, through the fallback, and the marker must not appear. As root
// and as uid 65534.
func TestRunHelperBinary(t *testing.T) {
	bin := buildAirlock(t)
	// Another build of the real helper: the same source with other
	// linker flags, which its build information records.
	other := filepath.Join(t.TempDir(), "airlock-sandbox")
	if out, err := exec.Command("go", "build", "-ldflags=-X=main.unused=other", "-o", other, "../airlock-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("build another airlock-sandbox: %v\n%s", err, out)
	}
	// Not t.TempDir: uid 65534 must reach it.
	root, err := os.MkdirTemp("", "airlock-helperbin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(root, "foreign-helper-ran")
	// A Go program of another module, and a script: both would leave the
	// marker if they ran.
	foreign := filepath.Join(root, "foreign")
	writeFile(t, filepath.Join(foreign, "go.mod"), "module example.com/foreign\n\ngo 1.22\n")
	writeFile(t, filepath.Join(foreign, "main.go"), "package main\n\nimport \"os\"\n\nfunc main() { os.WriteFile(\""+marker+"\", nil, 0o666) }\n")
	foreignBin := filepath.Join(root, "foreign-bin")
	cmd := exec.Command("go", "build", "-o", foreignBin, ".")
	cmd.Dir = foreign
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the foreign program: %v\n%s", err, out)
	}
	script := filepath.Join(root, "foreign-script")
	writeFile(t, script, "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	// Positive control: each foreign file, run, leaves the marker.
	for _, f := range []string{foreignBin, script} {
		if out, err := exec.Command(f).CombinedOutput(); err != nil || !sandboxtest.Exists(marker) {
			t.Fatalf("control: %s did not leave the marker: %v %s", f, err, out)
		}
		os.Remove(marker)
	}

	for _, tc := range []struct {
		name   string
		helper string // copied beside airlock as airlock-sandbox; "" for none
		want   string // "exe" (fallback) or "fd" (the helper binary)
	}{
		{"same build", airlockbin.Helper(bin), "fd"},
		{"absent", "", "exe"},
		{"another build", other, "exe"},
		{"a foreign Go program", foreignBin, "exe"},
		{"a script", script, "exe"},
	} {
		for _, user := range []string{"root", "uid-65534"} {
			t.Run(tc.name+"/"+user, func(t *testing.T) {
				if user != "root" && os.Geteuid() != 0 {
					t.Skip("already unprivileged: the other case is this one")
				}
				dir := filepath.Join(root, strings.ReplaceAll(tc.name, " ", "-")+"-"+user)
				ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
				for _, d := range []string{ws, home} {
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				nbin := filepath.Join(dir, "airlock")
				copyFile(t, bin, nbin)
				if tc.helper != "" {
					copyFile(t, tc.helper, filepath.Join(dir, "airlock-sandbox"))
				}
				args := []string{"run", "--workspace", ws, "--", "cat", "/proc/1/comm"}
				c := exec.Command(nbin, args...)
				if user != "root" {
					for _, d := range []string{ws, home} {
						if err := os.Chown(d, 65534, 65534); err != nil {
							t.Fatal(err)
						}
					}
					setpriv, err := exec.LookPath("setpriv")
					if err != nil {
						t.Skip("setpriv (util-linux) is not installed")
					}
					c = exec.Command(setpriv, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--", nbin}, args...)...)
					c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "LANG=C.UTF-8"}
				}
				c.Dir = ws
				code, so, se := runCmd(t, c)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, se)
				}
				comm, got := strings.TrimSpace(so), "fd"
				if comm == "exe" {
					got = "exe"
				}
				if got != tc.want {
					t.Errorf("the sandbox's pid 1 is %q: want the %s", comm, map[string]string{"exe": "fallback (/proc/self/exe)", "fd": "helper binary (/proc/self/fd/N)"}[tc.want])
				}
				if sandboxtest.Exists(marker) {
					t.Errorf("a foreign airlock-sandbox ran: %s exists", marker)
				}
			})
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
