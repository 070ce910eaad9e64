package signature_test

import (
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/webhook/signature"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := signature.NewSecret()
	if !regexp.MustCompile(`^whsec_[A-Za-z0-9+/=]+$`).MatchString(secret) {
		t.Fatalf("secret %q does not match the document's pattern", secret)
	}
	now := time.Unix(1_740_000_000, 0)
	body := []byte(`{"id":"0193b5ee-c6d7-7104-8f1d-92a3b4c5d6e7","type":"webhook_endpoint.test"}`)
	header, err := signature.Headers(secret, "0193b5ee-c6d7-7104-8f1d-92a3b4c5d6e7", now, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := signature.VerifyAt(secret, header, body, signature.DefaultTolerance, now.Add(time.Minute)); err != nil {
		t.Fatalf("valid delivery: %v", err)
	}

	tests := []struct {
		name   string
		secret string
		body   []byte
		now    time.Time
		edit   func(h map[string][]string)
		want   error
	}{
		{name: "TamperedBody", secret: secret, body: append([]byte(" "), body...), now: now, want: signature.ErrNoMatch},
		{name: "OtherSecret", secret: signature.NewSecret(), body: body, now: now, want: signature.ErrNoMatch},
		{name: "TooOld", secret: secret, body: body, now: now.Add(6 * time.Minute), want: signature.ErrTimestamp},
		{name: "FromTheFuture", secret: secret, body: body, now: now.Add(-6 * time.Minute), want: signature.ErrTimestamp},
		{name: "OtherID", secret: secret, body: body, now: now, edit: func(h map[string][]string) { h["Webhook-Id"] = []string{"x"} }, want: signature.ErrNoMatch},
		{name: "OtherTimestamp", secret: secret, body: body, now: now,
			edit: func(h map[string][]string) { h["Webhook-Timestamp"] = []string{strconv.FormatInt(now.Unix()+1, 10)} }, want: signature.ErrNoMatch},
		{name: "MissingSignature", secret: secret, body: body, now: now, edit: func(h map[string][]string) { delete(h, "Webhook-Signature") }, want: signature.ErrMissingHeaders},
		{name: "BadSecret", secret: "whsec_!!", body: body, now: now, want: signature.ErrSecret},
		{name: "OneOfSeveral", secret: secret, body: body, now: now,
			edit: func(h map[string][]string) {
				h["Webhook-Signature"] = []string{"v1,AAAA v2,zzz " + h["Webhook-Signature"][0]}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := header.Clone()
			if tc.edit != nil {
				tc.edit(h)
			}
			if err := signature.VerifyAt(tc.secret, h, tc.body, signature.DefaultTolerance, tc.now); !errors.Is(err, tc.want) {
				t.Errorf("VerifyAt = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSign_StandardWebhooksVector checks interoperability with the reference libraries of
// Standard Webhooks, using their published example.
func TestSign_StandardWebhooksVector(t *testing.T) {
	t.Parallel()
	got, err := signature.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}
