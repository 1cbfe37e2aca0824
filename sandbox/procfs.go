package sandbox

import (
	"bytes"
	"os"
	"strconv"
)

// procFile reads /proc/PID/NAME ("status", "fdinfo/3").
func procFile(pid int, name string) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
}

// procField returns the trimmed value of the "key:" line of a /proc
// file's contents; false when it has none.
func procField(data []byte, key string) (string, bool) {
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte(key+":")); ok {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}
