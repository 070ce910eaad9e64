// Package secretbox encrypts data the service must be able to read back but must not keep in
// clear at rest: stored responses that show a secret once, webhook signing secrets.
//
// It is AES-256-GCM with a random nonce per message; a sealed message is
// version(1) || nonce(12) || ciphertext+tag.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

const version = 1

// Box seals and opens messages with one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secretbox: key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// ParseKey decodes a base64 key as given in configuration.
func ParseKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("secretbox: key is not base64: %w", err)
	}
	return key, nil
}

// DevelopmentKey is the fixed key of development mode. It protects nothing: production
// deployments must configure their own key.
func DevelopmentKey() []byte {
	k := sha256.Sum256([]byte("provider-core-api development encryption key"))
	return k[:]
}

// Seal encrypts plaintext; additional binds the message to its context (e.g. a row's key),
// so a sealed value copied elsewhere does not open.
func (b *Box) Seal(plaintext, additional []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), 1+b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plaintext, additional)
}

// ErrCorrupt means a message does not open with this key and context.
var ErrCorrupt = errors.New("secretbox: message does not open")

// Open decrypts a message made by Seal with the same additional data.
func (b *Box) Open(sealed, additional []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrCorrupt
	}
	out, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], additional)
	if err != nil {
		return nil, ErrCorrupt
	}
	return out, nil
}
