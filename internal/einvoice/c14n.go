package einvoice

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"github.com/beevik/etree"
)

// canonical writes the C14N 1.1 form (without comments) of the document whose root is root,
// leaving out the children of root that skip names, into buf. It reads the tree in place:
// unlike a canonicalizer that copies the tree first, it allocates only the sorted attribute
// lists of elements with more than one attribute.
//
// The rules applied (W3C Canonical XML 1.1, section 2): elements always as start and end
// tags; namespace declarations before attributes, sorted by prefix (the default first), and a
// declaration only where it changes what is in scope; attributes sorted by namespace URI,
// then local name; text escaped &amp; &lt; &gt; &#xD;, attribute values &amp; &lt; &quot;
// &#x9; &#xA; &#xD;; comments dropped, processing instructions kept, CDATA sections as
// escaped text. What lies outside root (the XML declaration) is not part of the form.
func canonical(buf *bytes.Buffer, root *etree.Element, skip func(*etree.Element) bool) {
	writeCanonical(buf, root, nil, skip)
}

// inScope is a namespace declaration in scope: prefix ("" for the default) and URI, with
// the declarations of the ancestors after it.
type inScope struct {
	prefix, uri string
	outer       *inScope
}

func (s *inScope) lookup(prefix string) (string, bool) {
	for ; s != nil; s = s.outer {
		if s.prefix == prefix {
			return s.uri, true
		}
	}
	return "", false
}

func writeCanonical(buf *bytes.Buffer, e *etree.Element, scope *inScope, skip func(*etree.Element) bool) {
	var decls, attrs []etree.Attr
	for _, a := range e.Attr {
		prefix, isDecl := namespaceDeclaration(a)
		if !isDecl {
			attrs = append(attrs, a)
			continue
		}
		uri, known := scope.lookup(prefix)
		if known && uri == a.Value || !known && prefix == "" && a.Value == "" {
			continue // nothing changes: the declaration is superfluous
		}
		decls = append(decls, a)
		scope = &inScope{prefix: prefix, uri: a.Value, outer: scope}
	}
	buf.WriteByte('<')
	writeName(buf, e.Space, e.Tag)
	if len(decls) > 1 {
		slices.SortFunc(decls, func(a, b etree.Attr) int { return strings.Compare(declaredPrefix(a), declaredPrefix(b)) })
	}
	for _, a := range decls {
		writeCanonicalAttr(buf, a, a.Value)
	}
	if len(attrs) > 1 {
		slices.SortFunc(attrs, func(a, b etree.Attr) int {
			au, _ := scope.lookup(a.Space)
			bu, _ := scope.lookup(b.Space)
			if a.Space == "" {
				au = ""
			}
			if b.Space == "" {
				bu = ""
			}
			if c := strings.Compare(au, bu); c != 0 {
				return c
			}
			return strings.Compare(a.Key, b.Key)
		})
	}
	for _, a := range attrs {
		writeCanonicalAttr(buf, a, a.Value)
	}
	buf.WriteByte('>')
	for _, tok := range e.Child {
		switch t := tok.(type) {
		case *etree.Element:
			if skip == nil || !skip(t) {
				writeCanonical(buf, t, scope, nil)
			}
		case *etree.CharData:
			escapeCanonical(buf, t.Data, false)
		case *etree.ProcInst:
			buf.WriteString("<?")
			buf.WriteString(t.Target)
			if t.Inst != "" {
				buf.WriteByte(' ')
				buf.WriteString(t.Inst)
			}
			buf.WriteString("?>")
		}
	}
	buf.WriteString("</")
	writeName(buf, e.Space, e.Tag)
	buf.WriteByte('>')
}

// writeName writes a qualified name (etree's FullTag and FullKey build a new string).
func writeName(buf *bytes.Buffer, prefix, local string) {
	if prefix != "" {
		buf.WriteString(prefix)
		buf.WriteByte(':')
	}
	buf.WriteString(local)
}

// namespaceDeclaration reports whether a declares a namespace, and its prefix ("" for the
// default namespace).
func namespaceDeclaration(a etree.Attr) (prefix string, ok bool) {
	switch {
	case a.Space == "xmlns":
		return a.Key, true
	case a.Space == "" && a.Key == "xmlns":
		return "", true
	}
	return "", false
}

func declaredPrefix(a etree.Attr) string {
	p, _ := namespaceDeclaration(a)
	return p
}

func writeCanonicalAttr(buf *bytes.Buffer, a etree.Attr, value string) {
	buf.WriteByte(' ')
	writeName(buf, a.Space, a.Key)
	buf.WriteString(`="`)
	escapeCanonical(buf, value, true)
	buf.WriteByte('"')
}

// escapeCanonical writes s escaped as C14N escapes text (attr false) or attribute values.
func escapeCanonical(buf *bytes.Buffer, s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			if attr {
				continue
			}
			esc = "&gt;"
		case '"':
			if !attr {
				continue
			}
			esc = "&quot;"
		case '\t':
			if !attr {
				continue
			}
			esc = "&#x9;"
		case '\n':
			if !attr {
				continue
			}
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		buf.WriteString(s[last:i])
		buf.WriteString(esc)
		last = i + 1
	}
	buf.WriteString(s[last:])
}

// canonicalBuffers keeps the buffers of canonical forms between hashes (a 10-line invoice's
// is about 8 kB).
var canonicalBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
