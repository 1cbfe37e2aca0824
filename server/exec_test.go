package server

import (
	"encoding/json"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

func TestExec(t *testing.T) {
	none := newRig(t)
	none.wantError(503, "unavailable", "POST", "/v1/exec", `{"sandbox":"sh","agent":"a","argv":["true"]}`)

	cat, err := provider.ParseCatalog("sandboxes.toml", []byte(`
[sandbox.sh]
provider = "local"
timeout = "20s"

[sandbox.other]
provider = "local"

[agent.reviewer]
sandboxes = ["sh"]
`), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	r := newRig(t, withCatalog(cat))
	var res provider.Result
	r.must(200, "POST", "/v1/exec", `{"sandbox":"sh","agent":"reviewer","lang":"sh","code":"cat in.txt; echo out > o","files":{"in.txt":"input"},"output_files":["o"]}`, &res)
	if res.Status != provider.StatusSucceeded || res.Stdout != "input" || string(res.OutputFiles["o"]) != "out\n" || res.ExecutionID == "" {
		t.Fatalf("result: %+v", res)
	}
	var failed map[string]any
	r.must(200, "POST", "/v1/exec", `{"sandbox":"sh","agent":"reviewer","argv":["sh","-c","exit 3"]}`, &failed)
	if failed["status"] != "failed" || failed["exit_code"] != json.Number("3") && failed["exit_code"] != float64(3) {
		t.Fatalf("failed run: %+v", failed)
	}
	// The agent gets only its own sandboxes; an unknown agent none.
	r.wantError(403, "not_assigned", "POST", "/v1/exec", `{"sandbox":"other","agent":"reviewer","argv":["true"]}`)
	r.wantError(403, "not_assigned", "POST", "/v1/exec", `{"sandbox":"sh","agent":"nobody","argv":["true"]}`)
	r.wantError(403, "not_assigned", "POST", "/v1/exec", `{"sandbox":"nope","agent":"reviewer","argv":["true"]}`)
	for _, body := range []string{
		`{"agent":"reviewer","argv":["true"]}`,
		`{"sandbox":"sh","agent":"reviewer"}`,
		`{"sandbox":"sh","agent":"reviewer","argv":["true"],"code":"x"}`,
		`{"sandbox":"sh","agent":"reviewer","argv":["true"],"timeout":"soon"}`,
		`{"sandbox":"sh","agent":"reviewer","argv":["true"],"colour":1}`,
		`{"sandbox":"sh","agent":"reviewer","code":"x","files":{"../x":"y"}}`,
	} {
		r.wantError(400, "bad_request", "POST", "/v1/exec", body)
	}
}
