package xsd_test

import (
	"strings"
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
