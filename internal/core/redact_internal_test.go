package core

import "testing"

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
