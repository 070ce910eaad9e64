// Package ubl21 holds the OASIS UBL 2.1 XML schemas of an invoice (the Invoice main document
// and the common modules it imports), unmodified, embedded so that the server can validate
// invoices without anything outside its binary. Their licence notices are in NOTICE.
package ubl21

import "embed"

// FS holds the schemas under xsd/, laid out as OASIS publishes them: the main documents
// import the common modules by relative paths, so a validator reads them from this tree
// (or a copy of it, os.CopyFS).
//
//go:embed xsd NOTICE
var FS embed.FS

// InvoiceSchema is the path in FS of the Invoice main document's schema.
const InvoiceSchema = "xsd/maindoc/UBL-Invoice-2.1.xsd"
