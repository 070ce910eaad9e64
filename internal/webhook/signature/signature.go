// Package signature signs and verifies webhook deliveries the Standard Webhooks way
// (https://www.standardwebhooks.com): the headers webhook-id, webhook-timestamp (Unix seconds)
// and webhook-signature, a space-separated list of `v1,<base64 HMAC-SHA256>` over
// "{webhook-id}.{webhook-timestamp}.{raw body}", keyed with the bytes the endpoint secret
// `whsec_<base64>` encodes.
//
// Receivers verify against the exact raw body, before parsing it:
//
//	body, _ := io.ReadAll(r.Body)
//	if err := signature.Verify(secret, r.Header, body, signature.DefaultTolerance); err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// secretBytes is the size of a new secret's key: the block size HMAC-SHA256 hashes keys to.
const secretBytes = 32

// DefaultTolerance is how far a delivery's timestamp may be from the receiver's clock; older
// or future deliveries are refused, which bounds replays of a captured delivery.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify.
var (
	ErrMissingHeaders = errors.New("signature: webhook-id, webhook-timestamp or webhook-signature is missing")
	ErrTimestamp      = errors.New("signature: webhook-timestamp is not a Unix time within the tolerance")
	ErrNoMatch        = errors.New("signature: no signature matches")
	ErrSecret         = errors.New("signature: the secret is not whsec_ followed by base64")
)

// NewSecret returns a new random endpoint secret.
func NewSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// key decodes the HMAC key of secret; the whsec_ prefix is optional, as in Standard Webhooks.
func key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, ErrSecret
	}
	return k, nil
}

// Sign returns the webhook-signature value of a delivery of body with id at timestamp.
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(k, id, timestamp.Unix(), body)), nil
}

// Headers returns the three headers of a delivery of body with id at timestamp.
func Headers(secret, id string, timestamp time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secret, id, timestamp, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

func mac(k []byte, id string, unix int64, body []byte) []byte {
	h := hmac.New(sha256.New, k)
	fmt.Fprintf(h, "%s.%d.", id, unix)
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks that header signs body with secret and that its timestamp is within
// tolerance of now. Any one matching v1 signature of the list suffices (several are sent
// while a secret is being rolled).
func Verify(secret string, header http.Header, body []byte, tolerance time.Duration) error {
	return VerifyAt(secret, header, body, tolerance, time.Now())
}

// VerifyAt is Verify with the receiver's clock at now.
func VerifyAt(secret string, header http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	id, ts, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	k, err := key(secret)
	if err != nil {
		return err
	}
	want := mac(k, id, unix, body)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatch
}
