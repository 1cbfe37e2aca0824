package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"testing"
)

// fill sets every field reachable from v, recursively, to a value that
// json.Marshal does not omit, built from text (strings, keys) and n
// (numbers). A kind it does not know fails the test: a field of a new
// kind must be taught here and to specJSON.
func fill(t *testing.T, v reflect.Value, path, text string, n int) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			fill(t, v.Field(i), path+"."+f.Name, text+f.Name, n+i)
		}
	case reflect.String:
		v.SetString(text)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n+1) << 20) // a Size in MiB, a Duration, pids
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path, text, n)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(t, s.Index(0), path+"[0]", text+"0", n)
		fill(t, s.Index(1), path+"[1]", "/b"+text, n+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i, k := range []string{"Z" + text, "A" + text, text} {
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, e, path+"[k]", text+strconv.Itoa(i), n)
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	default:
		t.Fatalf("Spec%s is a %v, which fill (and specJSON) do not know", path, v.Kind())
	}
}

// TestSpecJSON: specJSON writes exactly what json.Marshal writes, for
// the presets, an empty Spec and a Spec with every field set, with plain
// text and with text that json escapes, so the fingerprint is the same
// whichever encodes it.
func TestSpecJSON(t *testing.T) {
	specs := map[string]Spec{"zero": {}}
	for _, name := range PresetNames() {
		specs["preset "+name] = Preset(name)
	}
	for _, text := range []string{"/plain/path", `q"b\s`, "<a>&b", "tab\tnl\nbs\bff\fbell\x07", "é\u2028\u2029", "bad\xffutf8", ""} {
		var s Spec
		fill(t, reflect.ValueOf(&s).Elem(), "", text, 0)
		specs["full "+strconv.Quote(text)] = s
	}
	for _, cpu := range []float64{0.1, 1e-7, 1e21, 3, 123456789.125} {
		var s Spec
		fill(t, reflect.ValueOf(&s).Elem(), "", "x", 0)
		s.Budgets.CPU = cpu
		f := false
		s.AutoAllowInSandbox = &f
		s.Budgets.Memory, s.Budgets.Output = 1536, 3<<10 // not a whole MiB, a KiB
		specs["cpu "+strconv.FormatFloat(cpu, 'g', -1, 64)] = s
	}
	for name, s := range specs {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: json.Marshal: %v", name, err)
		}
		got, err := specJSON(&s)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: specJSON =\n%s (err %v)\nwant json.Marshal's\n%s", name, got, err, want)
		}
	}
	// NaN has no JSON: both refuse it, so New does.
	s := Spec{Budgets: Budgets{CPU: math.NaN()}}
	if _, err := json.Marshal(s); err == nil {
		t.Fatal("json.Marshal accepted a NaN")
	}
	if _, err := specJSON(&s); err == nil {
		t.Error("specJSON accepted a NaN budgets.cpu")
	}
}

// TestIsEnvName: the loop accepts what the regexps it replaced accepted,
// ^[A-Za-z_][A-Za-z0-9_]*$ and, with star, a trailing * too.
func TestIsEnvName(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)
	for _, s := range []string{"", "*", "A", "_", "a1", "1a", "LC_*", "LC_**", "*LC", "A-B", "A B", "PATH", "x\n", "é", "Z9_z", "9", "_9", "A*B", "a.b",
		"**", "a", "LC*_", "9A", "A9", "A=B", "A\\n", "Ä", "AÄ", "*A", "A.B", "aZ_09*"} {
		if got, want := isEnvName(s, false), name.MatchString(s); got != want {
			t.Errorf("isEnvName(%q, false) = %v; want %v", s, got, want)
		}
		if got, want := isEnvName(s, true), pattern.MatchString(s); got != want {
			t.Errorf("isEnvName(%q, true) = %v; want %v", s, got, want)
		}
	}
}
