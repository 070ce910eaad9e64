package core

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSecretName holds secretName to the regular expression it stands in for: every name,
// ASCII or not, longer than its buffer or not, gets the expression's answer.
func FuzzSecretName(f *testing.F) {
	for _, seed := range []string{
		"secret", "client_SECRET", "Password", "passphrase", "access_token", "PrivateKey", "private_key", "privatekey", "api_key",
		"ApiKey", "full_key", "fullKey", "credentials", "Authorization", "signature_value", "otp", "totp", "pin", "PIN", "pinned",
		"spin", "idempotency_key", "key_prefix", "token_type", "name", "", "ſecret", "\u212Aey", "api_\u212Aey", "pıN", "tokén",
		"a_very_long_field_name_that_is_longer_than_sixty_four_bytes_and_ends_with_pin",
		"a_very_long_field_name_that_is_longer_than_sixty_four_bytes_and_ends_with_pins",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := secretName(name), secretField.MatchString(name); got != want {
			t.Errorf("secretName(%q) = %v, the expression says %v", name, got, want)
		}
	})
}

// FuzzValidJSON holds validJSON to json.Valid.
func FuzzValidJSON(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `1`, `-`, `-0`, `-01`, `01`, `1.`, `.5`, `1.5e`, `1e+5`, `1E-05`, `0.0e0`, `true`, `tru`, `truex`, `nul`, `null `,
		`"`, `""`, `"\"`, `"\u12"`, `"\u12g4"`, `"\u00e9"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\"", `"a\/b\\c\bd\fe\nf\rg\th"`,
		`{}`, `{"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":}`, `{1:1}`, `[]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`,
		` {"a" : [ 1 , {"b":null} ] } `, `{"a":1}x`, `{"a":1}{}`, "\t\n\r[1]\r\n", `[1]]`, `{"a":{"b":[1,2,{"c":"d"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Add([]byte(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)))
	f.Add([]byte(strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)))
	f.Add([]byte(strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth)))
	f.Add([]byte(strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
