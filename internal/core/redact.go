package core

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces the value of every secret field in a stored request or response body.
const Redacted = "[REDACTED]"

// secretField is the rule of what a body's field names that is secret: secrets, passwords,
// tokens, keys of any kind (the API key's value, private keys, the webhook secret), client
// secrets, credentials, signatures and authorization values. idempotency_key and the
// public parts of a key (key_prefix, prefix) are not secret.
var secretField = regexp.MustCompile(`(?i)(secret|password|passphrase|token|private_?key|api_?key|full_?key|credential|authorization|signature|otp|pin$)`)

// publicFields match the rule by name but are not secret.
var publicFields = map[string]bool{"idempotency_key": true, "key_prefix": true, "token_type": true, "token_endpoint": true}

// SecretField tells whether a body field of this name holds a secret.
func SecretField(name string) bool {
	return !publicFields[strings.ToLower(name)] && secretField.MatchString(name)
}

// Redactable tells whether RedactBody understands bodies of contentType: JSON and forms.
func Redactable(contentType string) bool {
	return strings.HasPrefix(contentType, "application/x-www-form-urlencoded") || strings.Contains(contentType, "json")
}

// RedactBody returns body with the value of every secret field (SecretField) replaced by
// Redacted, at any depth: JSON objects, and form-encoded bodies (the token endpoint's). ok is
// false when body is neither, and cannot be shown safely.
func RedactBody(contentType string, body []byte) (redacted []byte, ok bool) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return body, true
	case strings.HasPrefix(contentType, "application/x-www-form-urlencoded"):
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, false
		}
		for k := range form {
			if SecretField(k) {
				form[k] = []string{Redacted}
			}
		}
		return []byte(form.Encode()), true
	case strings.Contains(contentType, "json"):
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out, err := json.Marshal(redactValue(v))
		return out, err == nil
	}
	return nil, false
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if SecretField(k) && x != nil {
				v[k] = Redacted
			} else {
				v[k] = redactValue(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x)
		}
	}
	return v
}
