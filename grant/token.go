package grant

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"
)

// Token is an opaque, URL-safe, single-use grant. Its text is a bearer
// credential: every formatting and encoding method prints [Redacted] instead,
// so a token that strays into a log line or a JSON document does not leak.
// Convert with string(tok) only to hand it to the party that redeems it.
type Token string

// Redacted is what a [Token] prints as, and what [Redact] puts in place of
// token text.
const Redacted = "grant:REDACTED"

// String returns [Redacted].
func (Token) String() string { return Redacted }

// GoString returns [Redacted], for %#v.
func (Token) GoString() string { return Redacted }

// Format prints [Redacted] for every verb, so that no fmt verb (including
// %x, %q and %d) reaches the underlying string.
func (Token) Format(f fmt.State, verb rune) { io.WriteString(f, Redacted) }

// MarshalJSON encodes the token as the JSON string "grant:REDACTED".
func (Token) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText returns [Redacted], for encoders that use encoding.TextMarshaler.
func (Token) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue makes log/slog print [Redacted].
func (Token) LogValue() slog.Value { return slog.StringValue(Redacted) }

// tokenPrefix starts every token. It names the format version and makes
// token text easy to find, so [Redact] can remove it from free text.
const tokenPrefix = "airlock-grant1."

// maxTokenLen bounds the decoder's work on hostile input. A binding's argv or
// command can be long, but not this long.
const maxTokenLen = 1 << 20

// payloadVersion is the first byte of the MAC'd payload, so a future encoding
// can never be confused with this one.
const payloadVersion = 1

var b64 = base64.RawURLEncoding.Strict()

// Redact returns s with the text of every grant token in it replaced by
// [Redacted]. It finds tokens by their prefix, so it also catches a token
// whose MAC does not verify or that is cut short.
func Redact(s string) string {
	i := strings.Index(s, tokenPrefix)
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(s[:i])
		b.WriteString(Redacted)
		s = s[i+len(tokenPrefix):]
		j := 0
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		s = s[j:]
		i = strings.Index(s, tokenPrefix)
	}
	b.WriteString(s)
	return b.String()
}

// isTokenByte reports whether c can appear after the prefix of a token:
// the base64url alphabet and the dot between payload and MAC.
func isTokenByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}

// encodePayload writes b in a canonical, unambiguous form: a version byte,
// then each field in a fixed order, every string and list prefixed with its
// length as a 32-bit big-endian integer. No two Bindings share an encoding,
// so no choice of argv, command or directory can make one approval read as
// another. An empty Argv encodes like a nil one.
func encodePayload(b Binding) ([]byte, error) {
	buf := []byte{payloadVersion}
	var err error
	str := func(s string) {
		if len(s) > math.MaxUint32 {
			err = fmt.Errorf("%w: a field is longer than 4 GiB", ErrInvalidBinding)
			return
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	str(b.ExecutionID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(b.Argv)))
	for _, a := range b.Argv {
		str(a)
	}
	str(b.Command)
	str(b.Dir)
	str(b.Profile)
	str(b.Kind)
	str(b.Target)
	buf = binary.BigEndian.AppendUint64(buf, uint64(b.Expires.UnixNano()))
	buf = append(buf, b.Nonce[:]...)
	return buf, err
}

// decodePayload is the inverse of encodePayload. It rejects trailing bytes so
// that each Binding has exactly one encoding.
func decodePayload(p []byte) (Binding, error) {
	d := payloadDecoder{p: p}
	if v := d.byte(); v != payloadVersion {
		return Binding{}, fmt.Errorf("%w: unknown payload version %d", ErrMalformed, v)
	}
	var b Binding
	b.ExecutionID = d.str()
	if n := d.uint32(); n > 0 {
		// Each element needs at least its 4-byte length, which bounds n
		// before anything is allocated.
		if uint64(n) > uint64(len(d.p))/4 {
			d.fail()
		} else {
			b.Argv = make([]string, n)
			for i := range b.Argv {
				b.Argv[i] = d.str()
			}
		}
	}
	b.Command = d.str()
	b.Dir = d.str()
	b.Profile = d.str()
	b.Kind = d.str()
	b.Target = d.str()
	b.Expires = time.Unix(0, int64(d.uint64()))
	copy(b.Nonce[:], d.bytes(len(b.Nonce)))
	if d.bad || len(d.p) != 0 {
		return Binding{}, fmt.Errorf("%w: payload is cut short or has trailing bytes", ErrMalformed)
	}
	return b, nil
}

// payloadDecoder reads fields off the front of p; after the first short read
// it returns zero values and remembers the failure.
type payloadDecoder struct {
	p   []byte
	bad bool
}

func (d *payloadDecoder) fail() { d.bad, d.p = true, nil }

func (d *payloadDecoder) bytes(n int) []byte {
	if d.bad || n > len(d.p) {
		d.fail()
		return nil
	}
	out := d.p[:n]
	d.p = d.p[n:]
	return out
}

func (d *payloadDecoder) byte() byte {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *payloadDecoder) uint32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *payloadDecoder) uint64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *payloadDecoder) str() string {
	n := d.uint32()
	if uint64(n) > uint64(len(d.p)) {
		d.fail()
		return ""
	}
	return string(d.bytes(int(n)))
}

// computeMAC is HMAC-SHA256 under key over the encoded payload.
func computeMAC(key, payload []byte) [32]byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	var mac [32]byte
	h.Sum(mac[:0])
	return mac
}

// encodeToken signs the payload and renders the token text:
// prefix, base64url(payload), ".", base64url(mac).
func encodeToken(key, payload []byte) (Token, [32]byte) {
	mac := computeMAC(key, payload)
	return Token(tokenPrefix + b64.EncodeToString(payload) + "." + b64.EncodeToString(mac[:])), mac
}

// decodeToken parses token text and verifies its MAC under key before it
// looks at any field: a token whose MAC does not verify is ErrTampered and
// nothing else about it is trusted or reported. Text that is not shaped
// like a token at all is ErrMalformed.
func decodeToken(key []byte, t Token) (Binding, [32]byte, error) {
	var mac [32]byte
	s := string(t)
	if len(s) > maxTokenLen {
		return Binding{}, mac, fmt.Errorf("%w: token is longer than %d bytes", ErrMalformed, maxTokenLen)
	}
	rest, ok := strings.CutPrefix(s, tokenPrefix)
	if !ok {
		return Binding{}, mac, fmt.Errorf("%w: not an airlock grant token", ErrMalformed)
	}
	// The base64 decoder skips CR and LF; refuse them and anything else
	// outside the token alphabet, so that one token has one spelling.
	for j := 0; j < len(rest); j++ {
		if !isTokenByte(rest[j]) {
			return Binding{}, mac, fmt.Errorf("%w: byte %#x is not in the token alphabet", ErrMalformed, rest[j])
		}
	}
	p64, m64, ok := strings.Cut(rest, ".")
	if !ok {
		return Binding{}, mac, fmt.Errorf("%w: token has no MAC", ErrMalformed)
	}
	payload, err := b64.DecodeString(p64)
	if err != nil {
		return Binding{}, mac, fmt.Errorf("%w: payload is not base64url", ErrMalformed)
	}
	got, err := b64.DecodeString(m64)
	if err != nil || len(got) != len(mac) {
		return Binding{}, mac, fmt.Errorf("%w: MAC is not 32 bytes of base64url", ErrMalformed)
	}
	want := computeMAC(key, payload)
	if !hmac.Equal(got, want[:]) {
		return Binding{}, mac, ErrTampered
	}
	b, err := decodePayload(payload)
	if err != nil {
		// Only a holder of the key can produce this: a bug, not an attack.
		return Binding{}, mac, err
	}
	return b, want, nil
}
