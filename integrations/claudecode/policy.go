package claudecode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/rules"
)

// SandboxRequested reports whether any airlock rule file of src (managed,
// user, workspace or local layer) sets "sandbox = true". Any layer can
// turn the rewrite on and none can turn off what another turned on: it
// only ever makes a call more confined.
func SandboxRequested(src rules.Sources) (bool, error) {
	for _, f := range src.Files() {
		if f.Claude {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("%s layer: %w", f.Layer, err)
		}
		var v struct {
			Sandbox bool `toml:"sandbox"`
		}
		if _, err := toml.Decode(string(data), &v); err != nil {
			return false, fmt.Errorf("%s: %w", f.Path, err)
		}
		if v.Sandbox {
			return true, nil
		}
	}
	return false, nil
}
