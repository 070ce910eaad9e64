package xsd_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/provider/coreapi/internal/einvoice/ubl21"
	"github.com/provider/coreapi/internal/einvoice/xsd"
)

func TestValidate(t *testing.T) {
	s, err := xsd.Compile(ubl21.FS, ubl21.InvoiceSchema)
	if err != nil {
		t.Fatal(err)
	}
	const ns = `xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"`
	findings, total, err := s.Validate([]byte(`<Invoice ` + ns + `><cbc:Bogus>1</cbc:Bogus></Invoice>`))
	if err != nil || total == 0 || len(findings) == 0 || !strings.Contains(findings[0].Message, "Bogus") {
		t.Fatalf("an unknown element: %v %d %v", findings, total, err)
	}
	if _, _, err := s.Validate([]byte(`<Invoice`)); err != xsd.ErrNotParsed {
		t.Fatalf("a malformed document: %v", err)
	}
	// Many errors: the count goes on, the messages stop at the bound.
	many := `<Invoice ` + ns + `>` + strings.Repeat(`<cbc:Bogus>1</cbc:Bogus>`, 100) + `</Invoice>`
	findings, total, err = s.Validate([]byte(many))
	if err != nil || len(findings) > 20 || total < len(findings) {
		t.Fatalf("bounded findings: %d of %d, %v", len(findings), total, err)
	}
}

// TestValidateConcurrently: one compiled schema serves concurrent validations, each with its
// own findings.
func TestValidateConcurrently(t *testing.T) {
	s, err := xsd.Compile(ubl21.FS, ubl21.InvoiceSchema)
	if err != nil {
		t.Fatal(err)
	}
	const ns = `xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"`
	docs := []string{`<Invoice ` + ns + `><cbc:Alpha>1</cbc:Alpha></Invoice>`, `<Invoice ` + ns + `><cbc:Beta>1</cbc:Beta></Invoice>`}
	var wg sync.WaitGroup
	errs := make(chan string, 8*50)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := []string{"Alpha", "Beta"}[g%2]
			for range 50 {
				findings, _, err := s.Validate([]byte(docs[g%2]))
				if err != nil || len(findings) == 0 || !strings.Contains(findings[0].Message, want) {
					errs <- fmt.Sprintf("goroutine %d: %v %v", g, findings, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
