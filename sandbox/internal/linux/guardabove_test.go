package linux

import (
	"reflect"
	"testing"
)

func TestParseConfigPaths(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		want         []configEntry
	}{
		{"none", "[core]\n\tbare = false\n", nil},
		{"hooks path", "[core]\n\thooksPath = .githooks\n", []configEntry{{value: ".githooks"}}},
		{"case and quotes", "[CORE]\n\tHooksPath = \"tools/hooks\"\n", []configEntry{{value: "tools/hooks"}}},
		{"comment after the value", "[core]\n\thookspath = .husky/_ # husky\n", []configEntry{{value: ".husky/_"}}},
		{"section on the line", "[core] hooksPath = h\n", []configEntry{{value: "h"}}},
		{"include and includeIf", "[include]\n\tpath = ../a.gitconfig\n[includeIf \"gitdir:/x/\"]\n\tpath = ~/b.gitconfig\n",
			[]configEntry{{value: "../a.gitconfig", include: true}, {value: "~/b.gitconfig", include: true}}},
		{"other sections' path", "[remote \"origin\"]\n\tpath = nothing\n[core]\n\tworktree = ..\n", nil},
		{"empty value", "[core]\n\thooksPath =\n", nil},
		{"comment lines", "# [core]\n; hooksPath = x\n", nil},
		{"unterminated section", "[core\n\thooksPath = x\n", nil},
	} {
		if got := parseConfigPaths([]byte(tt.config)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: parseConfigPaths = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
