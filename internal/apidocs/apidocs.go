// Package apidocs serves the API reference: the OpenAPI document as YAML and JSON, and an
// interactive reference page (Swagger UI) whose assets are embedded in the binary, so the
// reference works with no network access.
//
// The Swagger UI files in assets/ are vendored from the npm package pinned by package.json
// and package-lock.json beside this file; `make docs-assets` refreshes them. index.html and
// init.js are this project's own.
package apidocs

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed assets
var assets embed.FS

// contentSecurityPolicy lets the page load only this server's own scripts, styles, images
// and document. Swagger UI sets inline style attributes, hence 'unsafe-inline' for styles.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Reference serves one OpenAPI document and the reference page over it.
type Reference struct {
	yaml, json document
	assets     http.Handler
	index      []byte
}

type document struct {
	body        []byte
	etag        string
	contentType string
}

func newDocument(body []byte, contentType string) document {
	sum := sha256.Sum256(body)
	return document{body: body, contentType: contentType, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}
}

// New prepares the reference of an OpenAPI document given as YAML; the JSON form is
// converted once, here, keeping the document's key order.
func New(openapiYAML []byte) (*Reference, error) {
	asJSON, err := YAMLToJSON(openapiYAML)
	if err != nil {
		return nil, fmt.Errorf("apidocs: %w", err)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return nil, err
	}
	return &Reference{
		yaml:   newDocument(openapiYAML, "application/yaml; charset=utf-8"),
		json:   newDocument(asJSON, "application/json"),
		assets: http.StripPrefix("/docs/assets/", http.FileServerFS(sub)),
		index:  index,
	}, nil
}

// ServeYAML serves the document as written (GET /openapi.yaml).
func (ref *Reference) ServeYAML(w http.ResponseWriter, r *http.Request) { ref.yaml.serve(w, r) }

// ServeJSON serves the document as JSON (GET /openapi.json).
func (ref *Reference) ServeJSON(w http.ResponseWriter, r *http.Request) { ref.json.serve(w, r) }

func (d document) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("ETag", d.etag)
	h.Set("Cache-Control", "no-cache")
	// Any origin may read the contract: generators and browser tools fetch it cross-origin.
	h.Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.body))
}

// ServeIndex serves the reference page (GET /docs).
func (ref *Reference) ServeIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(ref.index))
}

// ServeAsset serves the page's scripts, styles and images (GET /docs/assets/*).
func (ref *Reference) ServeAsset(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=3600")
	ref.assets.ServeHTTP(w, r)
}

// YAMLToJSON converts a YAML document to JSON, keeping the order of mapping keys (readers
// of the reference see operations and properties in the order the document lists them).
func YAMLToJSON(in []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(in, &root); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: only scalar mapping keys are supported", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	}
	return fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		b, _ := json.Marshal(f)
		buf.Write(b)
	default: // !!str, !!timestamp, !!binary: their text
		writeString(buf, n.Value)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	// Encode appends a newline.
	buf.Truncate(buf.Len() - 1)
}
