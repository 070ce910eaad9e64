package core_test

import (
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestRedactBody(t *testing.T) {
	cases := []struct {
		name, contentType, body, want string
		ok                            bool
	}{
		{"nested JSON", "application/json", `{"name":"k","secret":"abc","items":[{"full_key":"sk_x","prefix":"sk_sandbox_1"}],"client":{"client_secret":"z","token_type":"Bearer"}}`,
			`{"client":{"client_secret":"[REDACTED]","token_type":"Bearer"},"items":[{"full_key":"[REDACTED]","prefix":"sk_sandbox_1"}],"name":"k","secret":"[REDACTED]"}`, true},
		{"problem JSON", "application/problem+json", `{"access_token":"at_1","idempotency_key":"k1","key_prefix":"sk_p"}`,
			`{"access_token":"[REDACTED]","idempotency_key":"k1","key_prefix":"sk_p"}`, true},
		{"a form", "application/x-www-form-urlencoded", "grant_type=client_credentials&client_id=sk_a&client_secret=s3",
			"client_id=sk_a&client_secret=%5BREDACTED%5D&grant_type=client_credentials", true},
		{"no body", "application/json", "", "", true},
		{"truncated JSON cannot be shown", "application/json", `{"secret":"ab`, "", false},
		{"XML is not shown", "application/xml", "<Invoice/>", "", false},
	}
	for _, c := range cases {
		got, ok := core.RedactBody(c.contentType, []byte(c.body))
		if ok != c.ok || string(got) != c.want {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
