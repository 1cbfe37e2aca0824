//go:build linux

package seccomp

import "testing"

// TestInterpretModes: set-id bits in any mode argument the filter can see
// are refused; ordinary modes, and opens that create nothing, are not.
func TestInterpretModes(t *testing.T) {
	const (
		high    = 1 << 32
		oCreat  = 0o100
		tmpfile = 0o20200000
	)
	tests := []struct {
		arch string
		name string
		data seccompData
		want uint32
	}{
		{"amd64", "chmod 0755", call("amd64", "chmod", 0, 0o755), actAllow},
		{"amd64", "chmod 4755", call("amd64", "chmod", 0, 0o4755), actEPERM},
		{"amd64", "chmod 2755", call("amd64", "chmod", 0, 0o2755), actEPERM},
		{"amd64", "chmod 4755 high bits", call("amd64", "chmod", 0, high|0o4755), actEPERM},
		{"amd64", "fchmod 6755", call("amd64", "fchmod", 3, 0o6755), actEPERM},
		{"amd64", "fchmod 1777", call("amd64", "fchmod", 3, 0o1777), actAllow},
		{"amd64", "fchmodat 4755", call("amd64", "fchmodat", 0, 0, 0o4755), actEPERM},
		{"amd64", "fchmodat 0644", call("amd64", "fchmodat", 0, 0, 0o644), actAllow},
		{"amd64", "fchmodat2 4755", call("amd64", "fchmodat2", 0, 0, 0o4755, 0), actEPERM},
		{"amd64", "open O_CREAT 4755", call("amd64", "open", 0, oCreat, 0o4755), actEPERM},
		{"amd64", "open O_CREAT 0644", call("amd64", "open", 0, oCreat, 0o644), actAllow},
		{"amd64", "open without O_CREAT, junk mode", call("amd64", "open", 0, 0, 0o4755), actAllow},
		{"amd64", "openat O_CREAT 4755", call("amd64", "openat", 0, 0, oCreat, 0o4755), actEPERM},
		{"amd64", "openat O_TMPFILE 2755", call("amd64", "openat", 0, 0, tmpfile, 0o2755), actEPERM},
		{"amd64", "openat O_CREAT 0600", call("amd64", "openat", 0, 0, oCreat, 0o600), actAllow},
		{"amd64", "openat O_RDONLY", call("amd64", "openat", 0, 0, 0, 0o7777), actAllow},
		{"amd64", "creat 4755", call("amd64", "creat", 0, 0o4755), actEPERM},
		{"amd64", "mkdir 2775", call("amd64", "mkdir", 0, 0o2775), actEPERM},
		{"amd64", "mkdirat 0755", call("amd64", "mkdirat", 0, 0, 0o755), actAllow},
		{"amd64", "mknod S_IFREG|4755", call("amd64", "mknod", 0, 0o104755, 0), actEPERM},
		{"amd64", "mknodat S_IFIFO|0644", call("amd64", "mknodat", 0, 0, 0o10644, 0), actAllow},
		{"amd64", "openat2", call("amd64", "openat2"), actENOSYS},
		{"arm64", "fchmodat 4755", call("arm64", "fchmodat", 0, 0, 0o4755), actEPERM},
		{"arm64", "openat O_CREAT 4755", call("arm64", "openat", 0, 0, oCreat, 0o4755), actEPERM},
		{"arm64", "openat O_CREAT 0644", call("arm64", "openat", 0, 0, oCreat, 0o644), actAllow},
		{"arm64", "fchmod 2755", call("arm64", "fchmod", 0, 0o2755), actEPERM},
		{"arm64", "openat2", call("arm64", "openat2"), actENOSYS},
	}
	for _, tt := range tests {
		p, err := Build(tt.arch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := interpret(p.Filter, tt.data)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s %s: action %#x, want %#x", tt.arch, tt.name, got, tt.want)
		}
	}
}
