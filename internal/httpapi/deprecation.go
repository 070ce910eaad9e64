package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// deprecationHeaders tell clients that an operation is deprecated (RFC 9745 Deprecation)
// and, when the document gives one, when it stops working (RFC 8594 Sunset).
type deprecationHeaders struct {
	deprecation string // "@<unix seconds>" from x-deprecated-at, or "true" without a date
	sunset      string // an HTTP-date from x-sunset, or "" when none is announced
}

// deprecationOf derives the headers of op from the document: `deprecated: true`, with the
// optional extensions `x-deprecated-at` (when it was deprecated) and `x-sunset` (when it
// will be removed), each a date (2006-01-02) or a date-time (RFC 3339).
func deprecationOf(op *openapi3.Operation) (*deprecationHeaders, error) {
	if !op.Deprecated {
		return nil, nil
	}
	h := &deprecationHeaders{deprecation: "true"}
	if v, ok := op.Extensions["x-deprecated-at"]; ok {
		t, err := documentDate(v)
		if err != nil {
			return nil, fmt.Errorf("x-deprecated-at: %w", err)
		}
		h.deprecation = fmt.Sprintf("@%d", t.Unix())
	}
	if v, ok := op.Extensions["x-sunset"]; ok {
		t, err := documentDate(v)
		if err != nil {
			return nil, fmt.Errorf("x-sunset: %w", err)
		}
		h.sunset = t.UTC().Format(http.TimeFormat)
	}
	return h, nil
}

func documentDate(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%v is not a date string", v)
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2006-01-02) nor an RFC 3339 date-time", s)
	}
	return t, nil
}

func (h *deprecationHeaders) set(header http.Header) {
	header.Set("Deprecation", h.deprecation)
	if h.sunset != "" {
		header.Set("Sunset", h.sunset)
	}
}
