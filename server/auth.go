package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// TokenPrefix starts every bearer token, so one is easy to recognise (and
// to find in a leaked log).
const TokenPrefix = "alk_"

// tokenLen is the length of a token's text: the prefix and 32 random
// bytes in unpadded base64url.
var tokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(32)

type ctxKey struct{}

// tokenFrom returns the token that authenticated the request.
func tokenFrom(ctx context.Context) store.Token {
	t, _ := ctx.Value(ctxKey{}).(store.Token)
	return t
}

// authed lets a request through only with a known bearer token.
func (s *Server) authed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unauthorized := func(msg string) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", msg)
		}
		auth := r.Header.Values("Authorization")
		if len(auth) != 1 {
			unauthorized("send Authorization: Bearer TOKEN (make one with 'airlock serve token create --role ...')")
			return
		}
		scheme, text, ok := strings.Cut(auth[0], " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || len(text) != tokenLen || !strings.HasPrefix(text, TokenPrefix) {
			unauthorized("the Authorization header is not Bearer alk_...; make a token with 'airlock serve token create'")
			return
		}
		// The lookup is by the SHA-256 of the text, so how long it takes
		// says nothing about the text itself; the comparison that accepts
		// it is constant-time.
		sum := sha256.Sum256([]byte(text))
		t, err := s.lookupToken(r.Context(), sum)
		if errors.Is(err, store.ErrNotFound) || err == nil && subtle.ConstantTimeCompare(t.Hash[:], sum[:]) != 1 {
			unauthorized("unknown token; make one with 'airlock serve token create' against this daemon's database")
			return
		}
		if err != nil {
			s.internal(w, "looking up the token", err)
			return
		}
		if !t.RevokedAt.IsZero() {
			unauthorized(fmt.Sprintf("token %s was revoked at %s; make another with 'airlock serve token create'", t.ID, t.RevokedAt.UTC().Format(time.RFC3339)))
			return
		}
		if !t.ExpiresAt.IsZero() && !s.now().Before(t.ExpiresAt) {
			unauthorized(fmt.Sprintf("token %s expired at %s; make another with 'airlock serve token create'", t.ID, t.ExpiresAt.UTC().Format(time.RFC3339)))
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, t)))
	})
}

type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Error: msg, Code: code})
}

func (s *Server) internal(w http.ResponseWriter, what string, err error) {
	s.log.Error(what, "err", err)
	writeError(w, http.StatusInternalServerError, "internal", what+": "+err.Error())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // commands read as written: && not \u0026\u0026
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"error":"encoding the response failed","code":"internal"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// errBadBody marks a body decodeBody refused; its text says why.
type bodyError struct {
	status int
	code   string
	msg    string
}

func (e *bodyError) Error() string { return e.msg }

func badRequest(format string, args ...any) *bodyError {
	return &bodyError{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...)}
}

// decodeBody reads r's body into v strictly: one JSON object, no unknown
// field, no key twice, nothing after it, at most MaxBody bytes.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *bodyError {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &bodyError{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over %d bytes", MaxBody)}
		}
		return badRequest("reading the body: %v", err)
	}
	if err := checkJSON(data); err != nil {
		return badRequest("the body %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body does not fit: %v", err)
	}
	return nil
}

// checkJSON accepts exactly one JSON object with no key twice at any
// depth (encoding/json would silently keep the last, so the call decided
// could differ from the call shown) and nothing after it.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil {
		return fmt.Errorf("is not JSON: %v", err)
	} else if t != json.Delim('{') {
		return errors.New("is not a JSON object")
	}
	if err := walkObject(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("has more after its JSON object")
	}
	return nil
}

// walkObject walks the rest of an object whose '{' was read.
func walkObject(dec *json.Decoder) error {
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("is not valid JSON: %v", err)
		}
		k, _ := kt.(string)
		if seen[k] {
			return fmt.Errorf("has the key %q twice", k)
		}
		seen[k] = true
		if err := walkValue(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("is not valid JSON: %v", err)
	}
	return nil
}

func walkValue(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("is not valid JSON: %v", err)
	}
	switch t {
	case json.Delim('{'):
		return walkObject(dec)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("is not valid JSON: %v", err)
		}
	}
	return nil
}

// lookupToken finds a token by its hash in the Store, on every request:
// no replica keeps a token it found, so one revoked (or deleted) on any
// replica is refused on every replica from its next request on.
func (s *Server) lookupToken(ctx context.Context, sum [32]byte) (store.Token, error) {
	return s.st.LookupToken(ctx, sum)
}
