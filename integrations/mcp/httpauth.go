package mcp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// TokenPrefix starts every bearer token of "airlock mcp serve --http", so
// one is easy to recognise, and not mistaken for a daemon's token.
const TokenPrefix = "almcp_"

// LoadOrCreateToken returns the bearer token stored in the file at path,
// first making one there (mode 0600, its directory 0700) when the file
// does not exist. A file that others than its owner may read or write is
// refused: the token is all a local process needs to call the tools.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createToken(path)
	}
	if err != nil {
		return "", false, fmt.Errorf("read the token file: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", false, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("the token file %s has mode %v: others may read or change it; run chmod 600 %s, or delete it to have a new token made", path, fi.Mode().Perm(), path)
	}
	token = strings.TrimSpace(string(b))
	if !strings.HasPrefix(token, TokenPrefix) || len(token) < len(TokenPrefix)+32 {
		return "", false, fmt.Errorf("the token file %s does not hold a token (%s...); delete it to have one made", path, TokenPrefix)
	}
	return token, false, nil
}

func createToken(path string) (string, bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("make the token file's directory: %w", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", false, err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(secret)
	// O_EXCL: two servers starting at once do not overwrite each other's
	// token; the loser reads the winner's.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateToken(path)
	}
	if err != nil {
		return "", false, fmt.Errorf("create the token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", false, fmt.Errorf("write the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("write the token file: %w", err)
	}
	return token, true, nil
}

// RequireToken lets a request through to h only with the header
// "Authorization: Bearer TOKEN"; any other gets 401.
func RequireToken(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Values("Authorization")
		var got [32]byte
		ok := false
		if len(auth) == 1 {
			if scheme, text, cut := strings.Cut(auth[0], " "); cut && strings.EqualFold(scheme, "Bearer") {
				got, ok = sha256.Sum256([]byte(text)), true
			}
		}
		// Comparing hashes in constant time says nothing about how much
		// of a guess was right.
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airlock mcp"`)
			http.Error(w, "airlock mcp serve: send Authorization: Bearer TOKEN, with the token from the server's --token-file", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// DefaultTokenPath is where "airlock mcp serve --http" keeps its token
// unless --token-file says otherwise: $XDG_STATE_HOME/airlock, else
// ~/.local/state/airlock.
func DefaultTokenPath() string {
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "airlock", "mcp-serve.token")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "airlock", "mcp-serve.token")
}
