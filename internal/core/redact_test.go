package core_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestRedactBody(t *testing.T) {
	cases := []struct {
		name, contentType, body, want string
		ok                            bool
	}{
		{"nested JSON", "application/json", `{"name":"k","secret":"abc","items":[{"full_key":"sk_x","prefix":"sk_sandbox_1"}],"client":{"client_secret":"z","token_type":"Bearer"}}`,
			`{"name":"k","secret":"[REDACTED]","items":[{"full_key":"[REDACTED]","prefix":"sk_sandbox_1"}],"client":{"client_secret":"[REDACTED]","token_type":"Bearer"}}`, true},
		{"white space dropped, order and escapes kept, an escaped secret name found, null and objects", "application/json",
			" {\"b\" : [1, -2.5e3, true, null, \"x\\\"y\\u003c\"] ,\n\"secr\\u0065t\":{\"a\":[1]}, \"private_key\": null, \"api_key\" : 7 } ",
			`{"b":[1,-2.5e3,true,null,"x\"y\u003c"],"secr\u0065t":"[REDACTED]","private_key":null,"api_key":"[REDACTED]"}`, true},
		{"a secret longer once redacted", "application/json", `[{"token":""},{"token":"a"},{"token":[]}]`,
			`[{"token":"[REDACTED]"},{"token":"[REDACTED]"},{"token":"[REDACTED]"}]`, true},
		{"trailing data cannot be shown", "application/json", `{"a":1} {"secret":"x"}`, "", false},
		{"a bare value", "application/json", ` "text" `, `"text"`, true},
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

// FuzzRedactBody: whatever valid JSON is given, the redacted text is valid JSON with the same
// values but every secret field's that is not null, which reads Redacted; nothing else is
// shown.
func FuzzRedactBody(f *testing.F) {
	for _, seed := range []string{`{"a":{"secret":[1,{"token":null}],"b":"\"}"}}`, `[{"Full_Key":"x"},"s",1e5,false]`, `{"a\u0074oken":{"x":"]"}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		got, ok := core.RedactBody("application/json", body)
		var want, have any
		if !ok || json.Unmarshal(body, &want) != nil || json.Unmarshal(got, &have) != nil {
			t.Fatalf("%q: redacted %q, %v", body, got, ok)
		}
		if !reflect.DeepEqual(redactedTree(want), have) {
			t.Fatalf("%q: redacted %q", body, got)
		}
	})
}

// redactedTree is v with the value of every secret field that is not null replaced.
func redactedTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if core.SecretField(k) && x != nil {
				v[k] = core.Redacted
			} else {
				v[k] = redactedTree(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = redactedTree(x)
		}
	}
	return v
}
