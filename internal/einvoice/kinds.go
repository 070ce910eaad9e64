package einvoice

// Kind is one kind of tax document: a tax invoice, a credit note or a debit note, each either
// standard (B2B, KSA-2 positions 1-2 "01") or simplified (B2C, "02"). The generator is the
// same for every kind; the kind decides the type code and name, the number's prefix and
// which rules apply (the buyer of a standard document, the billing reference and reason of
// a note).
type Kind struct {
	// Type is the request's requested_invoice_type and the result's invoice_type.
	Type string
	// Code is the UBL InvoiceTypeCode (UNTDID 1001): 388 tax invoice, 381 credit note, 383
	// debit note.
	Code string
	// Name is the InvoiceTypeCode name attribute (KSA-2, NNPNESB): 01 standard or 02
	// simplified, with no third-party, nominal, export, summary or self-billed flag.
	Name string
	// NumberPrefix starts the document number (cbc:ID) before its counter value.
	NumberPrefix string
	// Standard is true for the B2B kinds (the buyer's name, identification and address).
	Standard bool
}

// Document kinds, by the requested_invoice_type that names them.
const (
	TypeSimplified           = "simplified_tax_invoice"
	TypeSimplifiedCreditNote = "simplified_credit_note"
	TypeSimplifiedDebitNote  = "simplified_debit_note"
	TypeStandard             = "standard_tax_invoice"
	TypeStandardCreditNote   = "standard_credit_note"
	TypeStandardDebitNote    = "standard_debit_note"
)

// UNTDID 1001 document type codes and the KSA-2 names of the two families.
const (
	codeTaxInvoice = "388"
	codeCreditNote = "381"
	codeDebitNote  = "383"
	nameStandard   = "0100000"
	nameSimplified = "0200000"
)

// Kinds lists every document kind the generator issues.
var Kinds = []Kind{
	{Type: TypeSimplified, Code: codeTaxInvoice, Name: nameSimplified, NumberPrefix: "SINV"},
	{Type: TypeSimplifiedCreditNote, Code: codeCreditNote, Name: nameSimplified, NumberPrefix: "SCN"},
	{Type: TypeSimplifiedDebitNote, Code: codeDebitNote, Name: nameSimplified, NumberPrefix: "SDN"},
	{Type: TypeStandard, Code: codeTaxInvoice, Name: nameStandard, NumberPrefix: "INV", Standard: true},
	{Type: TypeStandardCreditNote, Code: codeCreditNote, Name: nameStandard, NumberPrefix: "CN", Standard: true},
	{Type: TypeStandardDebitNote, Code: codeDebitNote, Name: nameStandard, NumberPrefix: "DN", Standard: true},
}

// KindOf returns the kind a requested_invoice_type names.
func KindOf(typ string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Type == typ {
			return k, true
		}
	}
	return Kind{}, false
}

// Note reports whether the kind is a credit or debit note: it refers to the invoice it
// corrects (BR-KSA-56) and says why it was issued (BR-KSA-17).
func (k Kind) Note() bool { return k.Code != codeTaxInvoice }

// KindOfRequest is the kind of a request; a request naming no known kind is a simplified tax
// invoice, the kind the generator issued before there were others.
func KindOfRequest(req Request) Kind {
	if k, ok := KindOf(req.RequestedType); ok {
		return k
	}
	return Kinds[0]
}
