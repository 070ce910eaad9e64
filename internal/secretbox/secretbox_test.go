package secretbox_test

import (
	"bytes"
	"testing"

	"github.com/provider/coreapi/internal/secretbox"
)

func TestBox(t *testing.T) {
	t.Parallel()
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(`{"full_key":"sk_sandbox_x_secret"}`)
	sealed := box.Seal(msg, []byte("row-1"))
	if bytes.Contains(sealed, []byte("secret")) {
		t.Fatal("sealed message contains the plaintext")
	}
	if again := box.Seal(msg, []byte("row-1")); bytes.Equal(again, sealed) {
		t.Error("two seals of one message are equal: the nonce is not random")
	}
	got, err := box.Open(sealed, []byte("row-1"))
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := box.Open(sealed, []byte("row-2")); err == nil {
		t.Error("a message opened in another context")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := box.Open(sealed, []byte("row-1")); err == nil {
		t.Error("a tampered message opened")
	}
	other, _ := secretbox.New(bytes.Repeat([]byte{7}, 32))
	if _, err := other.Open(box.Seal(msg, nil), nil); err == nil {
		t.Error("a message opened with another key")
	}
	if _, err := secretbox.New([]byte("short")); err == nil {
		t.Error("a short key was accepted")
	}
}
