package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestEventJSON: eventJSON writes exactly what json.Marshal writes, for
// an empty Event and for one with every field set (by reflection, so a
// new field is set too), with plain text and text json escapes.
func TestEventJSON(t *testing.T) {
	events := map[string]Event{"zero time": {Time: time.Time{}.UTC(), Type: TypeExit}}
	for _, text := range []string{"plain", `q"b\s`, "<a>&b", "tab\tnl\nbs\bff\fbell\x07", "é\u2028\u2029", "bad\xffutf8", ""} {
		var e Event
		v := reflect.ValueOf(&e).Elem()
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch f.Interface().(type) {
			case string:
				f.SetString(text + name)
			case time.Time:
				f.Set(reflect.ValueOf(time.Date(2026, 12, 2, 3, 4, 5, 600700000, time.UTC)))
			case *Requirement:
				f.Set(reflect.ValueOf(&Requirement{Kind: text + "kind", Target: text + "target"}))
			case map[string]any:
				f.Set(reflect.ValueOf(map[string]any{"n": 3, "neg": -7, "yes": true, "no": false, "s": text, text: []string{text}, "f": 1.5, "nil": nil, "id": struct {
					A string `json:"a,omitempty"`
				}{text}}))
			default:
				t.Fatalf("Event.%s is a %v, which this test (and eventJSON) do not know", name, f.Type())
			}
		}
		events["full "+strconv.Quote(text)] = e
	}
	whole := events[`full "plain"`]
	whole.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // no fraction
	events["whole second"] = whole
	zone := whole
	zone.Time = zone.Time.In(time.FixedZone("odd", 3600+30))
	events["zone with seconds"] = zone
	for name, e := range events {
		want, wantErr := json.Marshal(e)
		got, err := eventJSON(&e)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: eventJSON =\n%s (err %v)\nwant json.Marshal's\n%s (err %v)", name, got, err, want, wantErr)
		}
	}
	for name, e := range map[string]Event{
		"year 10000":  {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"NaN detail":  {Time: time.Now().UTC(), Detail: map[string]any{"x": math.NaN()}},
		"chan detail": {Time: time.Now().UTC(), Detail: map[string]any{"x": make(chan int)}},
	} {
		if _, err := eventJSON(&e); err == nil {
			t.Errorf("%s: eventJSON accepted what json.Marshal refuses", name)
		}
	}
}
