package mcp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequireToken(t *testing.T) {
	const token = TokenPrefix + "0123456789abcdef0123456789abcdef0123456789a"
	h := RequireToken(token, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"the token", []string{"Bearer " + token}, http.StatusTeapot},
		{"the scheme in lower case", []string{"bearer " + token}, http.StatusTeapot},
		{"no header", nil, http.StatusUnauthorized},
		{"another token", []string{"Bearer " + token[:len(token)-1] + "b"}, http.StatusUnauthorized},
		{"the token as Basic", []string{"Basic " + token}, http.StatusUnauthorized},
		{"the token without a scheme", []string{token}, http.StatusUnauthorized},
		{"the token twice", []string{"Bearer " + token, "Bearer " + token}, http.StatusUnauthorized},
		{"an empty bearer", []string{"Bearer "}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			for _, v := range tc.header {
				r.Header.Add("Authorization", v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("status %d, want %d", w.Code, tc.want)
			}
			if w.Code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("a 401 without WWW-Authenticate: Bearer")
			}
		})
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "airlock", "token")
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created || !strings.HasPrefix(tok, TokenPrefix) {
		t.Fatalf("first start: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", fi.Mode(), err)
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Errorf("second start: %q %v %v, want the same token read back", again, created, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token file others can read: %v, want a refusal that says chmod 600", err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateToken(bad); err == nil {
		t.Errorf("a file that holds no token was accepted")
	}
}
