package apidocs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/provider/coreapi/internal/apidocs"
	"github.com/provider/coreapi/openapi"
)

func TestYAMLToJSON(t *testing.T) {
	t.Parallel()
	t.Run("SameValueAsTheYAML", func(t *testing.T) {
		t.Parallel()
		got, err := apidocs.YAMLToJSON(openapi.Document)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON, fromYAML any
		if err := json.Unmarshal(got, &fromJSON); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if err := yaml.Unmarshal(openapi.Document, &fromYAML); err != nil {
			t.Fatal(err)
		}
		// Compare through one JSON encoding, which normalises number types and key order.
		a, _ := json.Marshal(fromJSON)
		b, err := json.Marshal(fromYAML)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("the JSON form differs from the YAML document")
		}
	})
	t.Run("KeepsKeyOrder", func(t *testing.T) {
		t.Parallel()
		got, err := apidocs.YAMLToJSON([]byte("b: 1\na: [true, null, 1.5, '2', x]\nc: {z: 1, y: 2}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"b":1,"a":[true,null,1.5,"2","x"],"c":{"z":1,"y":2}}`; string(got) != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
	t.Run("RefusesValuesWithoutJSONForm", func(t *testing.T) {
		t.Parallel()
		if _, err := apidocs.YAMLToJSON([]byte("a: .inf\n")); err == nil {
			t.Fatal("no error for infinity")
		}
	})
}

func TestReference(t *testing.T) {
	t.Parallel()
	ref, err := apidocs.New(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.yaml", ref.ServeYAML)
	mux.HandleFunc("GET /openapi.json", ref.ServeJSON)
	mux.HandleFunc("GET /docs", ref.ServeIndex)
	mux.HandleFunc("GET /docs/assets/", ref.ServeAsset)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	get := func(t *testing.T, path string, header http.Header) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	tests := []struct {
		path, contentType, contains string
	}{
		{"/openapi.yaml", "application/yaml", "openapi: 3.0.3"},
		{"/openapi.json", "application/json", `"openapi":"3.0.3"`},
		{"/docs", "text/html", `<div id="swagger-ui">`},
		{"/docs/assets/swagger-ui-bundle.js", "javascript", "SwaggerUIBundle"},
		{"/docs/assets/swagger-ui.css", "text/css", ".swagger-ui"},
		{"/docs/assets/init.js", "javascript", `url: "/openapi.json"`},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			t.Parallel()
			resp, body := get(t, tt.path, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tt.contentType)
			}
			if !bytes.Contains(body, []byte(tt.contains)) {
				t.Errorf("body lacks %q", tt.contains)
			}
		})
	}
	t.Run("PageAllowsOnlyItsOwnOrigin", func(t *testing.T) {
		t.Parallel()
		resp, _ := get(t, "/docs", nil)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "connect-src 'self'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
			}
		}
	})
	t.Run("DocumentRevalidatesByETag", func(t *testing.T) {
		t.Parallel()
		first, _ := get(t, "/openapi.json", nil)
		etag := first.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		again, body := get(t, "/openapi.json", http.Header{"If-None-Match": {etag}})
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("status %d with %d bytes, want 304 and none", again.StatusCode, len(body))
		}
	})
}
