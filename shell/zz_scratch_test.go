package shell

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZScratch(t *testing.T) {
	for _, c := range strings.Split(os.Getenv("CMDS"), "\n") {
		if c == "" {
			continue
		}
		fmt.Printf("## %s\n%s\n", c, show(Requirements(c, "/ws", "/home/u")))
	}
}
