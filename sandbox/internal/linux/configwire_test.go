package linux

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// fill sets every field reachable from v to a value that is not its
// zero, different from field to field (n counts up), so a field that
// EncodeConfig leaves out fails the round trip.
func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(strings.Repeat("x", *n%7+1) + "/é")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * -3)
	case reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 5)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i), n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0), n)
		fill(t, v.Index(1), n)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(t, v.Index(i), n)
		}
	default:
		t.Fatalf("fill: no value for a %s", v.Type())
	}
}

func TestConfigWireRoundTrip(t *testing.T) {
	var want Config
	n := 0
	fill(t, reflect.ValueOf(&want).Elem(), &n)
	data := EncodeConfig(&want)
	got, err := DecodeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("round trip differs:\n got %s\nwant %s", g, w)
	}

	// A zero config comes back zero (nil lists, nil pointers).
	data = EncodeConfig(&Config{})
	got, err = DecodeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, Config{}) {
		t.Fatalf("zero config came back as %+v", got)
	}
}

// Every truncation and every corrupted byte of a real config either
// fails with an error or decodes to something (never panics), and
// truncations and trailing bytes always fail.
func TestConfigWireStrict(t *testing.T) {
	var c Config
	n := 0
	fill(t, reflect.ValueOf(&c).Elem(), &n)
	data := EncodeConfig(&c)
	for i := 0; i < len(data); i++ {
		if _, err := DecodeConfig(data[:i]); err == nil {
			t.Fatalf("a config cut at %d of %d bytes decoded", i, len(data))
		}
	}
	if _, err := DecodeConfig(append(append([]byte(nil), data...), 0)); err == nil || !strings.Contains(err.Error(), "left over") {
		t.Fatalf("a trailing byte: %v, want a left-over error", err)
	}
	for i := 0; i < len(data); i++ {
		for _, b := range []byte{0x00, 0x02, 0x7f, 0x80, 0xff} {
			bad := append([]byte(nil), data...)
			bad[i] = b
			DecodeConfig(bad) // must not panic
		}
	}
	if _, err := DecodeConfig([]byte(`{"argv":["/bin/true"]}`)); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("JSON: %v, want a bad-magic error", err)
	}
	// A boolean other than 0 or 1 fails: in a zero config, the byte
	// before the last (PublishFD, 0) is PTY's presence flag.
	enc := EncodeConfig(&Config{})
	bad := append([]byte(nil), enc...)
	bad[len(bad)-2] = 2
	if _, err := DecodeConfig(bad); err == nil || !strings.Contains(err.Error(), "boolean") {
		t.Fatalf("a boolean of 2: %v, want a bad-boolean error", err)
	}
}

// BenchmarkConfigDecode decodes a default run's config
// (testdata/defaultconfig.json, 166 Landlock rules, 62 mounts), JSON
// against the wire encoding.
func BenchmarkConfigDecode(b *testing.B) {
	data, err := os.ReadFile("testdata/defaultconfig.json")
	if err != nil {
		b.Fatal(err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		b.Fatal(err)
	}
	wire := EncodeConfig(&c)
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var c Config
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			if _, err := DecodeConfig(wire); err != nil {
				b.Fatal(err)
			}
		}
	})
}
