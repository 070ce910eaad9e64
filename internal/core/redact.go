package core

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Redacted replaces the value of every secret field in a stored request or response body.
const Redacted = "[REDACTED]"

// secretField is the rule of what a body's field names that is secret: secrets, passwords,
// tokens, keys of any kind (the API key's value, private keys, the webhook secret), client
// secrets, credentials, signatures and authorization values. idempotency_key and the
// public parts of a key (key_prefix, prefix) are not secret.
// The words are secretWords, anywhere in the name, or "pin" at its end.
var secretField = regexp.MustCompile(`(?i)(` + strings.Join(secretWords, "|") + `|pin$)`)

// publicFields match the rule by name but are not secret.
var publicFields = map[string]bool{"idempotency_key": true, "key_prefix": true, "token_type": true, "token_endpoint": true}

// SecretField tells whether a body field of this name holds a secret.
func SecretField(name string) bool {
	return !publicFields[strings.ToLower(name)] && secretName(name)
}

// secretName is secretField.MatchString(name), without the regular expression for names in
// ASCII (all of this API's): the request log asks it of every key of every body it keeps, and
// the expression's backtracking cost as much as the rest of the redaction. Other names go to
// the expression, whose case folding goes beyond ASCII (ſ matches s, K matches k).
func secretName(name string) bool {
	var buf [64]byte
	if len(name) > len(buf) {
		return secretField.MatchString(name)
	}
	lower := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return secretField.MatchString(name)
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, word := range secretWords {
		if bytes.Contains(lower, []byte(word)) {
			return true
		}
	}
	return bytes.HasSuffix(lower, []byte("pin"))
}

// secretWords are the words of secretField, lower case (both spellings where an underscore is
// optional): one list for the expression and for secretName.
var secretWords = []string{"secret", "password", "passphrase", "token", "private_key", "privatekey", "api_key", "apikey",
	"full_key", "fullkey", "credential", "authorization", "signature", "otp"}

// Redactable tells whether RedactBody understands bodies of contentType: JSON and forms.
func Redactable(contentType string) bool {
	return strings.HasPrefix(contentType, "application/x-www-form-urlencoded") || strings.Contains(contentType, "json")
}

// RedactBody returns body with the value of every secret field (SecretField) replaced by
// Redacted, at any depth: JSON objects, and form-encoded bodies (the token endpoint's). ok is
// false when body is neither, and cannot be shown safely.
func RedactBody(contentType string, body []byte) (redacted []byte, ok bool) {
	text, ok := redactBody(contentType, body, math.MaxInt)
	return []byte(text), ok
}

// redactBody is RedactBody writing at most about limit bytes of a JSON body's redacted text
// (what is kept of it): the body is checked whole, then copied as it goes, in its own order
// and without its white space, each secret value replaced. No tree of the body is built, and
// the text is written once.
func redactBody(contentType string, body []byte, limit int) (redacted string, ok bool) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return string(body), true
	case strings.HasPrefix(contentType, "application/x-www-form-urlencoded"):
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return "", false
		}
		for k := range form {
			if SecretField(k) {
				form[k] = []string{Redacted}
			}
		}
		return form.Encode(), true
	case strings.Contains(contentType, "json"):
		if !validJSON(body) {
			return "", false
		}
		r := jsonRedactor{in: body, limit: limit}
		r.out.Grow(min(len(body), limit))
		r.value()
		return r.out.String(), true
	}
	return "", false
}

// jsonRedactor copies a valid JSON text (json.Valid) from in to out, compact, with the value of
// every secret field replaced by Redacted. It writes nothing past limit bytes but reads on.
type jsonRedactor struct {
	in    []byte
	pos   int
	out   strings.Builder
	limit int
}

func (r *jsonRedactor) write(b ...byte) {
	if room := r.limit - r.out.Len(); room > 0 {
		r.out.Write(b[:min(len(b), room)])
	}
}

func (r *jsonRedactor) space() {
	for r.pos < len(r.in) && (r.in[r.pos] == ' ' || r.in[r.pos] == '\t' || r.in[r.pos] == '\n' || r.in[r.pos] == '\r') {
		r.pos++
	}
}

// value copies the value at pos.
func (r *jsonRedactor) value() {
	r.space()
	switch r.in[r.pos] {
	case '{':
		r.object()
	case '[':
		r.pos++
		r.write('[')
		for r.space(); r.in[r.pos] != ']'; r.space() {
			if r.in[r.pos] == ',' {
				r.pos++
				r.write(',')
			}
			r.value()
		}
		r.pos++
		r.write(']')
	default:
		start := r.pos
		r.skip()
		r.write(r.in[start:r.pos]...)
	}
}

// object copies the object at pos, redacting the values of secret fields that are not null.
func (r *jsonRedactor) object() {
	r.pos++
	r.write('{')
	for r.space(); r.in[r.pos] != '}'; r.space() {
		if r.in[r.pos] == ',' {
			r.pos++
			r.write(',')
			r.space()
		}
		start := r.pos
		r.skip()
		key := r.in[start:r.pos]
		r.write(key...)
		r.space()
		r.pos++ // the colon
		r.write(':')
		r.space()
		if secretKey(key) && !bytes.HasPrefix(r.in[r.pos:], []byte("null")) {
			r.skip()
			r.write(redactedJSON...)
			continue
		}
		r.value()
	}
	r.pos++
	r.write('}')
}

var redactedJSON = []byte(`"` + Redacted + `"`)

// skip moves pos past the value at pos: a string, a whole object or array, a number or a
// literal.
func (r *jsonRedactor) skip() {
	switch r.in[r.pos] {
	case '"':
		for r.pos++; r.in[r.pos] != '"'; r.pos++ {
			if r.in[r.pos] == '\\' {
				r.pos++
			}
		}
		r.pos++
	case '{', '[':
		for depth := 0; ; {
			switch r.in[r.pos] {
			case '"':
				r.skip()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					r.pos++
					return
				}
			}
			r.pos++
		}
	default:
		for r.pos < len(r.in) && bytes.IndexByte([]byte(",}] \t\n\r"), r.in[r.pos]) < 0 {
			r.pos++
		}
	}
}

// secretKey reports whether the quoted JSON key names a secret field, its escapes decoded.
func secretKey(quoted []byte) bool {
	name := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(name, '\\') < 0 {
		return SecretField(string(name))
	}
	var decoded string
	return json.Unmarshal(quoted, &decoded) != nil || SecretField(decoded)
}
