package ubl21_test

import (
	"io/fs"
	pathpkg "path"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/einvoice/ubl21"
)

// Every module the invoice schema imports, directly or not, is embedded, and every file
// keeps its copyright header.
func TestEmbeddedSchemasAreComplete(t *testing.T) {
	seen := map[string]bool{}
	var visit func(path string)
	visit = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		b, err := fs.ReadFile(ubl21.FS, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if head := string(b[:min(len(b), 2000)]); !strings.Contains(strings.ToLower(head), "copyright") &&
			!strings.Contains(head, "This is a copy of") {
			t.Errorf("%s has no copyright header", path)
		}
		for _, part := range strings.Split(string(b), `schemaLocation="`)[1:] {
			rel := part[:strings.IndexByte(part, '"')]
			visit(pathpkg.Join(pathpkg.Dir(path), rel))
		}
	}
	visit(ubl21.InvoiceSchema)
	if len(seen) < 10 {
		t.Errorf("only %d schema files reached from the invoice schema", len(seen))
	}
	if _, err := fs.Stat(ubl21.FS, "NOTICE"); err != nil {
		t.Error(err)
	}
}
