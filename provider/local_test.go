package provider_test

import (
	"os"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/provider/providertest"
)

func TestLocalConformance(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	providertest.Run(t, providertest.Target{
		Driver: provider.LocalDriver(),
		Leftovers: func(t *testing.T) []string {
			entries, _ := os.ReadDir(tmp)
			var left []string
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "airlock-") {
					left = append(left, e.Name())
				}
			}
			return left
		},
	})
}
