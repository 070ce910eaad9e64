// Package xsd validates XML documents against the vendored UBL 2.1 schemas in process, with
// libxml2 (cgo; Debian's libxml2-dev to build, libxml2 to run). The schema is compiled once;
// each validation parses the document without network access, DTD loading or entity
// substitution and collects at most maxMessages findings in C, so a document cannot make a
// validation fetch anything, expand anything or produce unbounded output.
//
// No pure-Go validator handles the UBL 2.1 schemas well enough (see docs/design.md): libxml2
// is what xmllint, and so this repository's tests, always used.
package xsd

/*
#cgo pkg-config: libxml-2.0
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

#define MAX_MESSAGES 20
#define MAX_MESSAGE 400

typedef struct {
	int count;   // findings seen, may exceed MAX_MESSAGES
	int lines[MAX_MESSAGES];
	char messages[MAX_MESSAGES][MAX_MESSAGE];
} findings;

static void collect(void *data, xmlErrorPtr err) {
	findings *f = (findings *)data;
	if (err == NULL || err->level < XML_ERR_ERROR) {
		return;
	}
	if (f->count < MAX_MESSAGES) {
		f->lines[f->count] = err->line;
		snprintf(f->messages[f->count], MAX_MESSAGE, "%s", err->message ? err->message : "invalid");
	}
	f->count++;
}

static void ignore(void *data, xmlErrorPtr err) {}

static xmlSchemaPtr compile(const char *path) {
	xmlSchemaParserCtxtPtr pctxt = xmlSchemaNewParserCtxt(path);
	if (pctxt == NULL) {
		return NULL;
	}
	xmlSchemaSetParserStructuredErrors(pctxt, ignore, NULL);
	xmlSchemaPtr schema = xmlSchemaParse(pctxt);
	xmlSchemaFreeParserCtxt(pctxt);
	return schema;
}

// validate returns -1 when the document does not parse, else the number of findings.
static int validate(xmlSchemaPtr schema, const char *buf, int len, findings *f) {
	xmlParserCtxtPtr pctxt = xmlNewParserCtxt();
	if (pctxt == NULL) {
		return -1;
	}
	xmlDocPtr doc = xmlCtxtReadMemory(pctxt, buf, len, "document.xml", NULL,
		XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	xmlFreeParserCtxt(pctxt);
	if (doc == NULL) {
		return -1;
	}
	xmlSchemaValidCtxtPtr vctxt = xmlSchemaNewValidCtxt(schema);
	if (vctxt == NULL) {
		xmlFreeDoc(doc);
		return -1;
	}
	xmlSchemaSetValidStructuredErrors(vctxt, collect, f);
	int rc = xmlSchemaValidateDoc(vctxt, doc);
	xmlSchemaFreeValidCtxt(vctxt);
	xmlFreeDoc(doc);
	if (rc != 0 && f->count == 0) {
		f->count = 1;
		snprintf(f->messages[0], MAX_MESSAGE, "the document is not valid against the schema");
	}
	return f->count;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// maxMessages is how many findings one validation reports in full (C's MAX_MESSAGES).
const maxMessages = C.MAX_MESSAGES

// Schema is a compiled XML schema, safe for concurrent validations. It lives as long as the
// process.
type Schema struct {
	ptr C.xmlSchemaPtr
}

// Finding is one schema violation: its message and the line of the document it is on.
type Finding struct {
	Line    int
	Message string
}

// ErrNotParsed is returned when libxml2 cannot parse the document at all.
var ErrNotParsed = errors.New("xsd: the document could not be parsed")

// Compile copies the schema tree fsys to a temporary folder (the main schema imports the
// others by relative paths), compiles the schema at path in it and removes the copy.
func Compile(fsys fs.FS, path string) (*Schema, error) {
	C.xmlInitParser()
	dir, err := os.MkdirTemp("", "xsd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, fsys); err != nil {
		return nil, err
	}
	cpath := C.CString(filepath.Join(dir, path))
	defer C.free(unsafe.Pointer(cpath))
	ptr := C.compile(cpath)
	if ptr == nil {
		return nil, fmt.Errorf("xsd: the schema %s does not compile", path)
	}
	return &Schema{ptr: ptr}, nil
}

// Validate validates doc; it returns the findings (at most maxMessages) and how many there
// were in all, or ErrNotParsed. The caller bounds doc's size and refuses DTDs beforehand.
func (s *Schema) Validate(doc []byte) (findings []Finding, total int, err error) {
	if len(doc) == 0 {
		return nil, 0, ErrNotParsed
	}
	f := (*C.findings)(C.calloc(1, C.sizeof_findings))
	defer C.free(unsafe.Pointer(f))
	buf := C.CBytes(doc)
	defer C.free(buf)
	n := int(C.validate(s.ptr, (*C.char)(buf), C.int(len(doc)), f))
	if n < 0 {
		return nil, 0, ErrNotParsed
	}
	for i := 0; i < min(n, maxMessages); i++ {
		findings = append(findings, Finding{
			Line:    int(f.lines[i]),
			Message: strings.TrimSpace(C.GoString(&f.messages[i][0])),
		})
	}
	return findings, n, nil
}
