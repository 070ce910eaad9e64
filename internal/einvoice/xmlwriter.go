package einvoice

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// xmlWriter writes an XML document element by element, with no tree: into doc the document
// laid out as it is stored (each element on its own line, indented four spaces a level; text
// escaped &amp; &lt; &gt; &apos; &quot;; an element without content closed as <tag/>), and,
// when c14n is set, into c14n at the same time the C14N 1.1 canonical form of the same
// elements (what `canonical` writes from a parsed tree): the indentation kept as text, start
// and end tags for empty elements, C14N's escapes.
//
// It writes what the invoice needs, not every document: an element holds either text or
// elements, never both; attributes are written as given, so the caller gives them in C14N's
// order (namespace declarations first, by prefix, then the attributes by name), and declares
// each namespace once.
type xmlWriter struct {
	doc, c14n *bytes.Buffer
	// depth is the level of the writer's first element in its document (the root's is 0): a
	// part written on its own for a place in a document is indented as it will be there.
	depth int
	// flat writes no indentation at all.
	flat bool

	open    []string // the tags of the open elements, innermost last
	pending bool     // the innermost open element's start tag lacks its '>'
	nested  bool     // the innermost open element has element children
	holes   []int    // where in doc the parts written later go (see hole)
	// replaced counts the characters written as U+FFFD (asParsed).
	replaced int
}

// start opens element tag with attributes attrs (name, value, name, value, …).
func (w *xmlWriter) start(tag string, attrs ...string) {
	w.child()
	w.both("<", tag)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.both(" ", attrs[i])
		w.both(`="`, "")
		v := w.asParsed(attrs[i+1])
		escapeDocument(w.doc, v, true)
		if w.c14n != nil {
			escapeCanonical(w.c14n, v, true)
		}
		w.both(`"`, "")
	}
	w.open = append(w.open, tag)
	w.pending, w.nested = true, false
}

// text writes the text of the innermost open element; empty text writes nothing.
func (w *xmlWriter) text(s string) {
	if s == "" {
		return
	}
	w.closeStartTag()
	s = w.asParsed(s)
	escapeDocument(w.doc, s, false)
	if w.c14n != nil {
		escapeCanonical(w.c14n, s, false)
	}
}

// asParsed is s as a parser reads the document back (xmlText); each replacement is counted.
// The document and its canonical form are both written from it, so that the invoice hash is
// the hash of the text a reader parses.
func (w *xmlWriter) asParsed(s string) string {
	s, n := xmlText(s)
	w.replaced += n
	return s
}

// xmlText is s as a parser reads it back from a document: U+FFFD in place of what is not an
// XML character (control characters, invalid UTF-8, U+FFFE, U+FFFF), which XML cannot carry
// even as a reference, and how many characters were replaced. A value that is both written
// in the document and carried elsewhere (the QR's seller name) is taken from it, so that the
// two agree.
func xmlText(s string) (string, int) {
	clean := true
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		if !isXMLChar(r) || r == utf8.RuneError && width == 1 {
			clean = false
			break
		}
		i += width
	}
	if clean {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	replaced := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		if !isXMLChar(r) || r == utf8.RuneError && width == 1 {
			r = utf8.RuneError
			replaced++
		}
		b.WriteRune(r)
		i += width
	}
	return b.String(), replaced
}

// end closes the innermost open element.
func (w *xmlWriter) end() {
	tag := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	switch {
	case w.pending:
		w.doc.WriteString("/>")
		if w.c14n != nil {
			w.c14n.WriteString("></")
			w.c14n.WriteString(tag)
			w.c14n.WriteByte('>')
		}
	case w.nested:
		w.indentation(len(w.open))
		fallthrough
	default:
		w.both("</", tag)
		w.both(">", "")
	}
	w.pending, w.nested = false, true
}

// leaf writes an element with text (none when text is empty) and attributes.
func (w *xmlWriter) leaf(tag, text string, attrs ...string) {
	w.start(tag, attrs...)
	w.text(text)
	w.end()
}

// hole leaves the place of a child element of the innermost open element empty in doc, to be
// filled once it can be written (the stamp, which signs what is around it), and out of the
// canonical form (which the invoice hash covers without the stamp): its indentation is
// written to both, as the document has it.
func (w *xmlWriter) hole() {
	w.child()
	w.holes = append(w.holes, w.doc.Len())
	w.nested = true
}

// child prepares for a child element of the innermost open element: its parent's start tag
// closed, its line and indentation.
func (w *xmlWriter) child() {
	if len(w.open) == 0 {
		return
	}
	w.closeStartTag()
	w.indentation(len(w.open))
	w.nested = true
}

func (w *xmlWriter) closeStartTag() {
	if w.pending {
		w.both(">", "")
		w.pending = false
	}
}

// indentation writes the line break and indentation of an element level levels below the
// writer's first.
func (w *xmlWriter) indentation(levels int) {
	if w.flat {
		return
	}
	n := 4 * (w.depth + levels)
	w.both("\n", "")
	for n > 0 {
		k := min(n, len(spaces))
		w.both(spaces[:k], "")
		n -= k
	}
}

const spaces = "                                                                "

// both writes a and b, unescaped, to the document and to the canonical form.
func (w *xmlWriter) both(a, b string) {
	w.doc.WriteString(a)
	w.doc.WriteString(b)
	if w.c14n != nil {
		w.c14n.WriteString(a)
		w.c14n.WriteString(b)
	}
}

// escapeDocument writes s, made of XML characters (asParsed), escaped as the stored document
// escapes text and attribute values (as etree wrote the documents stored before): &amp; &lt;
// &gt; &apos; &quot;; and, so that a parser reads back what was written rather than normalize
// it, a carriage return as &#xD; and, in an attribute value, a tab and a line feed as &#x9;
// and &#xA;.
func escapeDocument(buf *bytes.Buffer, s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\'':
			esc = "&apos;"
		case '"':
			esc = "&quot;"
		case '\r':
			esc = "&#xD;"
		case '\t':
			if attr {
				esc = "&#x9;"
			}
		case '\n':
			if attr {
				esc = "&#xA;"
			}
		}
		if esc != "" {
			buf.WriteString(s[last:i])
			buf.WriteString(esc)
			last = i + 1
		}
	}
	buf.WriteString(s[last:])
}

// isXMLChar reports whether r is a character XML 1.0 allows (its production Char).
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
