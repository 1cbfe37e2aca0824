package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// WorkspaceFile is where a workspace keeps its own profile.
const WorkspaceFile = ".airlock/profile.toml"

// Spec returns a copy of the validated spec (absolute, sorted paths).
func (p *Profile) Spec() Spec { return p.spec.clone() }

// Fingerprint is the hex SHA-256 of the profile's canonical encoding.
func (p *Profile) Fingerprint() string { return p.fingerprint }

// Required is the set of guarantees the profile requires of the host.
func (p *Profile) Required() Guarantee { return p.require }

// Workspace is the absolute, symlink-free workspace path.
func (p *Profile) Workspace() string { return p.spec.Workspace }

// ParseTOML reads a profile file's text. name is used in error messages.
// Unknown keys are an error (a typo must not silently weaken a profile).
// A file may name a preset; its settings are then applied on top of it.
func ParseTOML(name string, data []byte) (Spec, error) {
	s, err := parseLayer(name, data)
	if err != nil || s.Preset == "" {
		return s, err
	}
	return Merge(Preset(s.Preset), s), nil
}

// parseLayer is ParseTOML without applying the preset the file names, so
// that Compose can put the file over other layers on that preset.
func parseLayer(name string, data []byte) (Spec, error) {
	var s Spec
	md, err := toml.Decode(string(data), &s)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Spec{}, fmt.Errorf("%s: line %d: %s", name, pe.Position.Line, pe.Message)
		}
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Spec{}, fmt.Errorf("%s: unknown key %s; see docs/PROFILES.md for the keys a profile has",
			name, strings.Join(keys, ", "))
	}
	if s.Preset != "" {
		if _, err := LookupPreset(s.Preset); err != nil {
			return Spec{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// LoadLayer reads a profile file as written: the preset it names is
// recorded in Preset but not applied (see Compose).
func LoadLayer(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("profile: %w", err)
	}
	return parseLayer(path, data)
}

// Compose builds a spec in the documented order (docs/PROFILES.md): a
// preset, then each layer over it, later layers adding to or replacing
// what earlier ones set. The preset is preset when it is not empty (a
// --profile NAME), else the one the last layer naming a preset names,
// else DefaultPreset: a --profile file that names a preset changes the
// base under the workspace's own file instead of discarding that file.
func Compose(preset string, layers ...Spec) (Spec, error) {
	name := preset
	if name == "" {
		name = DefaultPreset
		for _, l := range layers {
			if l.Preset != "" {
				name = l.Preset
			}
		}
	}
	out, err := LookupPreset(name)
	if err != nil {
		return Spec{}, err
	}
	for _, l := range layers {
		out = Merge(out, l)
	}
	out.Preset = name
	return out, nil
}

// LoadFile reads a profile file from disk (see ParseTOML).
func LoadFile(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("profile: %w", err)
	}
	return ParseTOML(path, data)
}

// LoadWorkspaceFile reads ws/.airlock/profile.toml; ok is false when the
// workspace has none.
func LoadWorkspaceFile(ws string) (s Spec, ok bool, err error) {
	path := filepath.Join(ws, WorkspaceFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Spec{}, false, nil
	}
	s, err = LoadFile(path)
	return s, err == nil, err
}
