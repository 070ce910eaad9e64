package core_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/provider/coreapi/internal/core"
)

func TestNewRequestLogBody(t *testing.T) {
	big := `{"secret":"s3","note":"` + strings.Repeat("é", core.RequestLogBodyLimit) + `"}` // 2 bytes a character
	cases := []struct {
		name, contentType, body string
		size                    int64 // 0: len(body)
		want                    string
		truncated               bool
		omitted                 string
	}{
		{"JSON is redacted", "application/json", `{"full_key":"sk_a_b_c","name":"k"}`, 0, `{"full_key":"[REDACTED]","name":"k"}`, false, ""},
		{"a form is redacted", "application/x-www-form-urlencoded", "client_secret=x&grant_type=client_credentials", 0,
			"client_secret=%5BREDACTED%5D&grant_type=client_credentials", false, ""},
		{"empty", "", "", 0, "", false, ""},
		{"redacted, then cut to the limit on a character", "application/json", big, 0,
			`{"secret":"[REDACTED]","note":"` + strings.Repeat("é", (core.RequestLogBodyLimit-len(`{"secret":"[REDACTED]","note":"`))/2), true, ""},
		{"larger than can be captured", "application/json", `{"a":1}`, core.RequestLogBodyCapture + 1, "", false, core.BodyTooLarge},
		{"not JSON or a form: described only", "application/pdf", "%PDF-1.7 secret", 0, "", false, core.BodyUnsupportedContentType},
		{"JSON that does not parse", "application/json", `{"secret":"s`, 0, "", false, core.BodyInvalid},
	}
	for _, c := range cases {
		size := c.size
		if size == 0 {
			size = int64(len(c.body))
		}
		b := core.NewRequestLogBody(c.contentType, []byte(c.body), size)
		got := ""
		if b.Body != nil {
			got = *b.Body
		}
		omitted := ""
		if b.Omitted != nil {
			omitted = *b.Omitted
		}
		if got != c.want || b.Truncated != c.truncated || omitted != c.omitted || b.Size != size ||
			len(got) > core.RequestLogBodyLimit || !utf8.ValidString(got) {
			t.Errorf("%s: body %.60q… (%d bytes) truncated %v omitted %q size %d, want %.60q… truncated %v omitted %q",
				c.name, got, len(got), b.Truncated, omitted, b.Size, c.want, c.truncated, c.omitted)
		}
	}
}
