package einvoice

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/provider/coreapi/internal/einvoice/ubl21"
	"github.com/provider/coreapi/internal/einvoice/xsd"
)

// Kinds of a validation result and its overall verdict, as the authority's validator reports
// them: PASS without warnings or errors, WARNING with warnings only, ERROR with an error.
const (
	ResultInfo    = "info"
	ResultWarning = "warning"
	ResultError   = "error"

	VerdictPass    = "PASS"
	VerdictWarning = "WARNING"
	VerdictError   = "ERROR"
)

// Categories of validation results: what was checked.
const (
	CategorySchema      = "schema"         // UBL 2.1 XSD
	CategoryRules       = "business_rules" // KSA and EN 16931 rules
	CategoryHash        = "hash"           // the invoice hash
	CategoryQR          = "qr"             // the QR payload against the document
	CategorySignature   = "signature"      // the cryptographic stamp
	CategoryCertificate = "certificate"    // the certificate of the stamp
)

// Result is one finding of a validation.
type Result struct {
	Type     string `json:"type"`
	Code     string `json:"code"`
	Category string `json:"category"`
	Message  string `json:"message"`
	// Path is the JSON pointer of a request's finding; empty for a document's.
	Path string `json:"path,omitempty"`
}

// Report is the outcome of validating one document.
type Report struct {
	Results []Result
}

// Verdict is ERROR when a result is an error, WARNING when one is a warning, else PASS.
func (r Report) Verdict() string {
	verdict := VerdictPass
	for _, res := range r.Results {
		switch res.Type {
		case ResultError:
			return VerdictError
		case ResultWarning:
			verdict = VerdictWarning
		}
	}
	return verdict
}

// MaxResults bounds the results a report lists.
const MaxResults = 500

// Bounded returns the report with at most limit results: past that, the first limit-1 and
// one result saying how many more there were, of the type that keeps the whole report's
// verdict.
func (r Report) Bounded(limit int) Report {
	if len(r.Results) <= limit {
		return r
	}
	verdict := r.Verdict()
	kept := append([]Result{}, r.Results[:limit-1]...)
	typ := map[string]string{VerdictError: ResultError, VerdictWarning: ResultWarning, VerdictPass: ResultInfo}[verdict]
	kept = append(kept, Result{Type: typ, Code: "SBX-MORE-01", Category: kept[len(kept)-1].Category,
		Message: fmt.Sprintf("%d more results were not listed (the verdict %s counts them all).", len(r.Results)-len(kept), verdict)})
	return Report{Results: kept}
}

// ValidateRequest checks an invoice request as generation would (Prepare), issuing nothing:
// each issue becomes a business-rules result with its path; an amount out of range is an
// error result.
func ValidateRequest(req Request) Report {
	d, err := Prepare(req)
	if err != nil {
		return Report{Results: []Result{{Type: ResultError, Code: "SBX-AMOUNT-01", Category: CategoryRules, Path: "/line_items",
			Message: fmt.Sprintf("An amount of the invoice exceeds %s SAR.", FormatAmount(MaxAmount))}}}
	}
	results := make([]Result, len(d.Issues))
	for i, is := range d.Issues {
		results[i] = Result{Type: is.Severity, Code: is.Code, Category: CategoryRules, Message: is.Message, Path: is.Path}
	}
	return Report{Results: results}
}

var shared = sync.OnceValues(NewValidator)

// SharedValidator is the process's validator: the schema is compiled by the first call and
// never again.
func SharedValidator() (*Validator, error) { return shared() }

// report collects results, and the first error that ends the validation (a lookup failing).
type report struct {
	results []Result
	err     error
}

func (r *report) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *report) add(typ, category, code, format string, args ...any) {
	r.results = append(r.results, Result{Type: typ, Code: code, Category: category, Message: fmt.Sprintf(format, args...)})
}

// MaxDocumentBytes bounds a document given to ValidateXML (the HTTP layer refuses larger
// bodies before reading them).
const MaxDocumentBytes = 1 << 20

// maxDepth bounds the nesting of a document's elements; a UBL invoice needs about 12.
const maxDepth = 64

// ErrNotXML is the error of a body that is not a document this validator reads: not
// well-formed, larger than MaxDocumentBytes, nested deeper than maxDepth, or declaring a DTD
// (which could declare entities to expand or fetch). Its message says which.
var ErrNotXML = errors.New("einvoice: not an XML document")

// Validator validates UBL 2.1 invoices (every kind: 388, 381, 383; standard or simplified).
// It holds the compiled UBL 2.1 schema and is safe for concurrent use.
type Validator struct {
	schema *xsd.Schema
	now    func() time.Time
}

// NewValidator compiles the vendored UBL 2.1 invoice schema: once per process.
func NewValidator() (*Validator, error) {
	s, err := xsd.Compile(ubl21.FS, ubl21.InvoiceSchema)
	if err != nil {
		return nil, err
	}
	return &Validator{schema: s, now: time.Now}, nil
}

// ValidateXML checks doc as the authority's validator would: the UBL 2.1 schema, the KSA and
// EN 16931 business rules this package implements, the invoice hash, the QR payload, the
// signature and its certificate. trust holds the caller's sandbox certificate and the sandbox
// CA's: a document stamped with the first, with the second (cleared), or with a certificate
// the second issued (an EGS unit's) is checked against them. Only a body that is no document
// is an error (wrapping ErrNotXML); every finding is a result.
func (v *Validator) ValidateXML(doc []byte, trust Trust) (Report, error) {
	tree, err := parse(doc)
	if err != nil {
		return Report{}, err
	}
	// libxml2 validates the schema while Go checks the rest: the two share nothing but doc,
	// which neither changes. The schema's results come first.
	schema := &report{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.checkSchema(schema, doc)
	}()
	r := &report{}
	root := tree.Root()
	if root.Tag == "Invoice" && root.NamespaceURI() == nsInvoice { // nothing else can be read from another document
		inv := readInvoice(root)
		checkRules(r, inv, v.now())
		stamp := checkHash(r, tree, inv)
		checkStamp(r, inv, stamp, trust)
	}
	<-done
	if r.err != nil {
		return Report{}, r.err
	}
	return Report{Results: append(schema.results, r.results...)}, nil
}

// parse reads doc, refusing what no invoice contains and the schema validator should never
// be given: an oversized body, a DTD (entity declarations, external subsets) and absurd
// nesting. Go's parser expands no entity but the five predefined ones and fetches nothing,
// so its cost is bounded by the size of doc.
func parse(doc []byte) (*etree.Document, error) {
	if len(doc) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: it is larger than %d bytes", ErrNotXML, MaxDocumentBytes)
	}
	tree := etree.NewDocument()
	if err := tree.ReadFromBytes(doc); err != nil {
		return nil, fmt.Errorf("%w: it is not well-formed (%s)", ErrNotXML, truncate(err.Error(), 200))
	}
	roots := 0
	for _, tok := range tree.Child {
		switch t := tok.(type) {
		case *etree.Directive:
			return nil, fmt.Errorf("%w: it declares a DTD or another directive (<!%s…>); invoices have none, and DTDs and entities are refused",
				ErrNotXML, firstWord(t.Data))
		case *etree.Element:
			roots++
		}
	}
	if roots != 1 {
		return nil, fmt.Errorf("%w: it has %d root elements, not one", ErrNotXML, roots)
	}
	if depth(tree.Root(), 1) > maxDepth {
		return nil, fmt.Errorf("%w: its elements are nested deeper than %d levels", ErrNotXML, maxDepth)
	}
	return tree, nil
}

// depth is the nesting depth below e, which is at level; it stops counting past maxDepth.
func depth(e *etree.Element, level int) int {
	deepest := level
	if level > maxDepth {
		return level
	}
	for _, c := range e.ChildElements() {
		deepest = max(deepest, depth(c, level+1))
	}
	return deepest
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return truncate(f[0], 40)
	}
	return ""
}

// longInteger matches libxml2's finding on an integer longer than it reads.
var longInteger = regexp.MustCompile(`^Element '[^']+': '[+-]?[0-9]{25,}' is not a valid value of the atomic type 'xs:integer'\.$`)

// checkSchema validates doc against the UBL 2.1 schema.
func (v *Validator) checkSchema(r *report, doc []byte) {
	findings, total, err := v.schema.Validate(doc)
	if err != nil {
		r.add(ResultError, CategorySchema, "SBX-XSD-01", "The document could not be read for schema validation.")
		return
	}
	for _, f := range findings {
		if longInteger.MatchString(f.Message) {
			// libxml2 reads at most 24 digits of an xs:integer; the value is valid (e.g. a
			// certificate serial number in the XAdES properties).
			total--
			continue
		}
		r.add(ResultError, CategorySchema, "SBX-XSD-01", "Line %d: %s", f.Line, f.Message)
	}
	if more := total - len(findings); more > 0 {
		r.add(ResultError, CategorySchema, "SBX-XSD-01", "%d more schema errors were not listed.", more)
	}
	if total == 0 {
		r.add(ResultInfo, CategorySchema, "SBX-XSD-00", "The document is valid against the UBL 2.1 Invoice schema.")
	}
}
