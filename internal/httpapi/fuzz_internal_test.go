package httpapi

import (
	"bytes"
	"encoding/json"
	"github.com/provider/coreapi/internal/metrics"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// fuzzOperation is one operation with a request body, as the gate fuzzer sends it.
type fuzzOperation struct {
	method, path string
	example      []byte
}

// bodyOperations lists the operations of the document that take a JSON body, with their
// documented example, and their paths with parameters filled in.
func bodyOperations(tb testing.TB, doc *openapi3.T) []fuzzOperation {
	var ops []fuzzOperation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			example, _ := json.Marshal(op.RequestBody.Value.Content.Get("application/json").Example)
			concrete := path
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") {
					concrete = strings.Replace(concrete, seg, "0193a000-0000-7000-8000-000000000001", 1)
				}
			}
			if strings.Contains(path, "{product}") {
				concrete = strings.Replace(path, "{product}", "einvoice", 1)
			}
			ops = append(ops, fuzzOperation{method: method, path: concrete, example: example})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].method+ops[i].path < ops[j].method+ops[j].path })
	if len(ops) < 10 {
		tb.Fatalf("only %d operations with a body", len(ops))
	}
	return ops
}

// FuzzContractGate sends arbitrary bodies and content types to every operation that takes a
// body, through the contract gate (authentication, kin-openapi validation, the strict JSON
// decoder, the NUL and null checks). The gate must answer a problem of 4xx, never 5xx and
// never panic; what it lets through must be exactly one JSON value of valid UTF-8 with no
// NUL character in any string, small enough, as the handlers and PostgreSQL expect.
// `make test-reliability` runs it with -fuzz for a while; `go test` runs the seeds.
func FuzzContractGate(f *testing.F) {
	doc, err := LoadDocument()
	if err != nil {
		f.Fatal(err)
	}
	ops := bodyOperations(f, doc)
	gate, err := newContract(doc, &bearerAuthenticator{development: true, allScopes: ScopesOf(doc)}, false, metrics.New())
	if err != nil {
		f.Fatal(err)
	}
	var passed []byte
	h := gate.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	for i, op := range ops {
		f.Add(uint8(i), "application/json", op.example)
		f.Add(uint8(i), "application/json", bytes.Replace(op.example, []byte(`"`), []byte(`"\u0000`), 1))
	}
	f.Add(uint8(0), "application/json", []byte(strings.Repeat("[", 100000)))
	f.Add(uint8(1), "application/json; charset=utf-8", []byte(`{"a":1e400,"b":-0,"c":"\ud800"}`))
	f.Add(uint8(2), "text/plain", []byte("\xff\xfe"))
	f.Add(uint8(3), "application/x-www-form-urlencoded", []byte("grant_type=client_credentials&client_id=%00"))
	f.Fuzz(func(t *testing.T, which uint8, contentType string, body []byte) {
		op := ops[int(which)%len(ops)]
		req := httptest.NewRequest(op.method, op.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer dev:operator")
		rec := httptest.NewRecorder()
		passed = nil
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s %s: %d %s", op.method, op.path, rec.Code, rec.Body)
		case rec.Code == http.StatusNoContent:
			if len(passed) > maxBodyBytes || !utf8.Valid(passed) {
				t.Fatalf("the gate let through %d bytes, valid UTF-8 %v", len(passed), utf8.Valid(passed))
			}
			// An empty body passes where the body is optional (rotateApiKey).
			if len(passed) > 0 && strings.HasPrefix(strings.ToLower(contentType), "application/json") {
				var v any
				if err := json.Unmarshal(passed, &v); err != nil {
					t.Fatalf("the gate let through a body that is not one JSON value: %v", err)
				}
				if p := nulStrings(v, "", nil); len(p) > 0 {
					t.Fatalf("the gate let through a NUL at %v", p)
				}
			}
		case rec.Code < 400:
			t.Fatalf("unexpected status %d", rec.Code)
		default:
			var p map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p["code"] == nil {
				t.Fatalf("%d without a problem body: %s", rec.Code, rec.Body)
			}
		}
	})
}

// FuzzStrictJSONBodyDecoder: the decoder either refuses or returns one JSON value without a
// NUL in any string; it never panics, whatever the bytes.
func FuzzStrictJSONBodyDecoder(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":"b"}`, `{"a":"\u0000"}`, `{"\u0000":1}`, `[1,2]`, `1 2`, "\"\xff\"", `{"a":1e400}`, strings.Repeat("[", 20000)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := strictJSONBodyDecoder(bytes.NewReader(data), http.Header{}, nil, nil)
		if err != nil {
			return
		}
		if !utf8.Valid(data) {
			t.Fatal("accepted invalid UTF-8")
		}
		if p := nulStrings(v, "", nil); len(p) > 0 {
			t.Fatalf("accepted a NUL at %v", p)
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("accepted a value that does not encode again: %v", err)
		}
	})
}
