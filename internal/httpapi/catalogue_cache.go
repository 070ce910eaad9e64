package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
)

// maxCatalogueResponses bounds the cached catalogue bodies; a full cache starts over, so
// odd queries cannot pin memory and the usual ones come back at once.
const maxCatalogueResponses = 256

// catalogueResponses keeps the encoded bodies of catalogue lists, each under the catalogue
// version read before the catalogue itself. A body is served only while the catalogue still
// has that version, and every change to products, plans or prices raises it in its own
// transaction (migration 00102): no answer is older than the catalogue it describes. A
// request still asks PostgreSQL for the version (one row), not for plans and prices, and
// skips converting and encoding them.
type catalogueResponses struct {
	mu      sync.RWMutex
	version int64
	bodies  map[string]encodedJSON
}

func (c *catalogueResponses) get(version int64, key string) (encodedJSON, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.version != version {
		return nil, false
	}
	body, ok := c.bodies[key]
	return body, ok
}

func (c *catalogueResponses) put(version int64, key string, body encodedJSON) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case version < c.version:
		return // built from an older catalogue than the cache already holds
	case version > c.version || len(c.bodies) >= maxCatalogueResponses:
		c.version, c.bodies = version, map[string]encodedJSON{}
	}
	c.bodies[key] = body
}

// catalogueResponse answers a catalogue list from the cache, or builds the response body,
// encodes it as the generated response would and keeps it. Errors are never kept.
func (s *Server) catalogueResponse(ctx context.Context, key string, build func() (any, error)) (encodedJSON, error) {
	version, err := s.cfg.Services.Catalogue.Version(ctx)
	if err != nil {
		return nil, err
	}
	if body, ok := s.catalogue.get(version, key); ok {
		return body, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	body := encodedJSON(buf.Bytes())
	s.catalogue.put(version, key, body)
	return body, nil
}

// encodedJSON is the body of a 200 response, encoded once and written as it is. (Request-Id
// is set by the request middleware, as for every response.)
type encodedJSON []byte

func (b encodedJSON) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

// VisitListProductsResponse implements api.ListProductsResponseObject.
func (b encodedJSON) VisitListProductsResponse(w http.ResponseWriter) error { return b.write(w) }

// VisitListPlansResponse implements api.ListPlansResponseObject.
func (b encodedJSON) VisitListPlansResponse(w http.ResponseWriter) error { return b.write(w) }
