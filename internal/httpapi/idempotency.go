package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/metrics"
)

// idempotent makes every POST sent with an Idempotency-Key run at most once per principal
// and key (docs/design.md, "Idempotency"): the first completed response is stored with the request's effect
// and replayed, with `Idempotent-Replayed: true`, to every retry. It runs after the contract
// gate, so the key (1..255 characters), the credential and the body are already valid.
func idempotent(svc core.IdempotencyService, m *metrics.Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" || svc == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeProblem(w, r, requestProblem(err))
			return
		}
		req := idempotentRequest(r, key, body)
		resp, replayed, err := svc.Run(r.Context(), req, func(ctx context.Context) core.IdempotentResponse {
			first := newBufferedResponse()
			next.ServeHTTP(first, r.WithContext(ctx))
			return first.stored()
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		h := w.Header()
		for k, v := range resp.Header {
			h[k] = v
		}
		if replayed {
			m.IdempotencyReplayed()
			h.Set("Idempotent-Replayed", "true")
		}
		h.Set("Content-Type", resp.ContentType)
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
	})
}

// idempotentRequest identifies r for the idempotency store. Keys belong to the principal
// (an API key and its access tokens share them), with the scopes it holds: a replay goes only
// to a credential holding every scope of the first request's. The token endpoint has no
// principal, so there keys belong to the OAuth client named in the request, and the client
// authentication is part of the request compared on replay.
func idempotentRequest(r *http.Request, key string, body []byte) core.IdempotentRequest {
	r.Body = io.NopCloser(bytes.NewReader(body))
	h := sha256.New()
	h.Write(canonicalBody(r.Header.Get("Content-Type"), body))
	req := core.IdempotentRequest{Key: key, Method: r.Method, Path: r.URL.Path}
	if p, err := core.PrincipalFrom(r.Context()); err == nil {
		req.Scope = p.Subject
		req.Scopes = make([]string, 0, len(p.Scopes))
		for sc, held := range p.Scopes {
			if held {
				req.Scopes = append(req.Scopes, sc)
			}
		}
		slices.Sort(req.Scopes)
		if !p.IsOperator() {
			req.OrganizationID = &p.OrganizationID
		}
	} else {
		h.Write([]byte("\x00" + r.Header.Get("Authorization")))
		req.Scope = "oauth_client:" + oauthClientID(r, body)
	}
	req.Hash = h.Sum(nil)
	return req
}

// canonicalBody makes equal requests hash equally whatever their key order or spacing.
func canonicalBody(contentType string, body []byte) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/json":
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			if b, err := json.Marshal(v); err == nil {
				return b
			}
		}
	case "application/x-www-form-urlencoded":
		if v, err := url.ParseQuery(string(body)); err == nil {
			return []byte(v.Encode())
		}
	}
	return body
}

// oauthClientID is the client_id of a token request, from HTTP Basic or the body.
func oauthClientID(r *http.Request, body []byte) string {
	if id, _, ok := r.BasicAuth(); ok {
		return id
	}
	var fields struct {
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal(body, &fields) == nil && fields.ClientID != "" {
		return fields.ClientID
	}
	if v, err := url.ParseQuery(string(body)); err == nil {
		return v.Get("client_id")
	}
	return ""
}

// bufferedResponse holds a handler's response until it is stored with its effect.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) stored() core.IdempotentResponse {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return core.IdempotentResponse{Status: b.status, ContentType: b.header.Get("Content-Type"), Header: b.header, Body: b.body.Bytes()}
}
