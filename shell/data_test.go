package shell

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestCodeInData: every construct that evaluates a value the parser
// cannot see yields an unresolved command.execute whose shape is one
// Hole; values the call only assigned inert numbers do not.
func TestCodeInData(t *testing.T) {
	hidden := []string{
		"x='a[$(id)]'; (( x ))", "x='a[$(id)]'; let x", "x='a[$(id)]'; echo $((x))", "x='a[$(id)]'; echo $[x]",
		"x='a[$(id)]'; [[ $x -eq 0 ]]", "x='a[$(id)]'; [[ x -lt 1 ]]", "x='a[$(id)]'; [[ -v $x ]]",
		"x='a[$(id)]'; test $x -eq 0", "x='a[$(id)]'; [ \"$x\" -ge 0 ]", "x='a[$(id)]'; test -v \"$x\"",
		"x='a[$(id)]'; a[x]=1", "x='a[$(id)]'; echo ${a[x]}", "x='a[$(id)]'; echo ${a[$x]}", "x='a[$(id)]'; a=([x]=1)",
		"x='a[$(id)]'; echo ${s:x}", "x='a[$(id)]'; echo ${s:0:x}", "x='a[$(id)]'; echo ${!x}", "x='$(id)'; echo ${x@P}",
		"x='a[$(id)]'; printf -v \"$x\" 1", "x='a[$(id)]'; printf '%d' \"$x\"", "x='a[$(id)]'; shift $x",
		"x='a[$(id)]'; exit $x", "x='a[$(id)]'; return $x", "x='a[$(id)]'; declare -i y=$x", "declare -i y; read v; y=$v",
		"x='a[$(id)]'; for ((i=0; i<x; i++)); do :; done", "read x; (( x ))", "read -a a; (( a[0] ))",
		"mapfile a; echo $(( a[1] ))", "readarray -t a < f; (( a ))", "getopts ab o; (( o ))", "read \"$n\"",
		"unset \"$n\"", "declare \"$n\"", "declare -n r=\"$n\"", "x=$(cat f); (( x ))", "for x in $(cat f); do (( x )); done",
		"f() { (( $1 )); }", "(( $(cat f) ))", "echo $(( HOME ))", "eval \"$x\"", "eval $x", "bash -c \"$x\"",
		"sh -c \"$x\" sh", "source f", ". f", "source <(cat f)", "echo x | bash", "bash <<< x", "sh -s", "env -S \"$x\"",
		"mapfile -C \"$c\" a", "trap \"$x\" EXIT", "PS4='$(id)'", "PROMPT_COMMAND=\"$x\"", "BASH_ENV=f bash -c :",
		"git -c include.path=f status", "git --exec-path=/x status", "GIT_EXEC_PATH=/x git status",
		"npm test --userconfig f", strings.Repeat("eval ", 12) + "id",
	}
	for _, src := range hidden {
		found := false
		for _, r := range Requirements(src, "/ws", "/home/u") {
			if r.Kind == tool.KindCommandExecute && r.Unresolved && r.Shape == string(tool.Hole) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no unresolved command:\n%s", src, show(Requirements(src, "/ws", "/home/u")))
		}
	}
	inert := []string{
		"for ((i=0; i<10; i++)); do echo $i; done", "n=5; for ((i=0; i<n; i++)); do :; done",
		"for i in 1 2 3; do echo $((i*2)); done", "[[ $# -eq 0 ]]", "echo $((1+2))", "x=1; y=x; (( y ))",
		"x=3; echo ${a[x]} ${a[@]} ${!a[@]} ${#a[@]}", "printf '%s\\n' \"$x\"", "test -f x", "[ -n \"$x\" ]",
		"read -r line", "x=$(( $# + 1 )); (( x > 2 ))", "declare -i n=4", "bash script.sh", "bash --version",
		"echo ${x@Q}", "exit 1", "(( RANDOM % 2 ))",
	}
	for _, src := range inert {
		for _, r := range Requirements(src, "/ws", "/home/u") {
			if r.Kind == tool.KindCommandExecute && r.Unresolved && r.Shape == string(tool.Hole) {
				t.Errorf("%q: unexpected unresolved command %v", src, r)
			}
		}
	}
}
