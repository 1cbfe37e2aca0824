package profile

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a number of bytes. In TOML and on the command line it is written
// with a unit: 512MiB, 2GiB, 64KiB, 1.5G, 4096 (bytes).
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a size such as "512MiB". It rejects negative numbers,
// unknown units and trailing words, saying what a valid size looks like.
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("empty size; use a number with a unit like 512MiB or 2GiB")
	}
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*mult > float64(1<<62) {
		return 0, fmt.Errorf("%q is not a size; use a number with a unit like 512MiB or 2GiB", s)
	}
	return Size(n * mult), nil
}

// String writes the size in the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if s != 0 && int64(s)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(s)/u.mult, u.name)
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// UnmarshalText lets TOML files write sizes as strings ("512MiB").
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText writes the size as String does.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
