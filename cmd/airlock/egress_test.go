package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/testnet"
)

// TestRunNet runs airlock run --net against a test host on a veth pair
// (10.213.13.0/24, never an outside address): the allowed host:port
// works, another port is refused with one line on stderr and a denial in
// --report, and --net all still refuses cloud metadata.
func TestRunNet(t *testing.T) {
	testnet.Require(t)
	testnet.RequireTools(t, "curl")
	h := testnet.NewHost(t, "10.213.13.0/24", "fd00:a1:13::/64")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello cli\n") })}
	go srv.Serve(h.ListenTCP(t, "", 80))
	t.Cleanup(func() { srv.Close() })
	bin := buildAirlock(t)
	ws := t.TempDir()
	host := h.Addr4.String()

	run := func(args ...string) (int, string, string) {
		return runCLI(t, bin, append([]string{"run", "--workspace", ws}, args...)...)
	}

	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := run("--net", host+":80", "--report", report, "--",
		"sh", "-c", "curl -sS --max-time 5 http://"+host+"/ && curl -sS --max-time 5 http://"+host+":81/")
	line := "airlock: blocked connect to " + host + ":81 (port 81 is not allowed for " + host + "; allowed: 80)\n"
	if code != 7 || out != "hello cli\n" || strings.Count(errOut, line) != 1 {
		t.Fatalf("exit %d stdout %q stderr %q; want 7 (curl's), the page, and once %q", code, out, errOut, line)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Denials []map[string]string `json:"denials"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Denials) != 1 || res.Denials[0]["protocol"] != "tcp" || res.Denials[0]["target"] != host+":81" {
		t.Fatalf("report denials %s (%v)", b, err)
	}

	code, _, errOut = run("--net", "all", "--", "curl", "-sS", "--max-time", "5", "http://169.254.169.254/")
	if code == 0 || !strings.Contains(errOut, "airlock: blocked connect to 169.254.169.254:80 (169.254.169.254 is a cloud metadata address") {
		t.Fatalf("--net all and metadata: exit %d stderr %q", code, errOut)
	}
	code, out, _ = run("--net", "all,"+host+":80", "--", "curl", "-sS", "--max-time", "5", "http://"+host+"/")
	if code != 0 || out != "hello cli\n" {
		t.Fatalf("--net all with a private exception: exit %d stdout %q", code, out)
	}
	code, _, errOut = run("--net", "all,example.com", "--", "true")
	if code != 125 || !strings.Contains(errOut, "IP literals") {
		t.Fatalf("--net all,NAME: exit %d stderr %q", code, errOut)
	}
}
