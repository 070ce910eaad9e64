package postgres

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// A statement's first large text is queued as a reservedText that makes room for it and every
// argument after it; smaller texts, and the arguments before it, stay as they are.
func TestReserveParameters(t *testing.T) {
	id := uuid.New()
	small, xml, body := "SIM-000001", strings.Repeat("<a/>", 3000), []byte(`{"k":"`+strings.Repeat("v", 4000)+`"}`)
	second := strings.Repeat("x", 2000)
	args := reserveParameters([]any{id, small, xml, body, second, nil})
	if args[0] != id || args[1] != small || !bytes.Equal(args[3].([]byte), body) || args[4] != second || args[5] != nil {
		t.Fatalf("arguments other than the first large text changed: %v", args)
	}
	r, ok := args[2].(reservedText)
	if !ok || r.text != xml {
		t.Fatalf("the first large text is %T, want it reserved", args[2])
	}
	if need := len(xml) + len(body) + len(second); r.room < need {
		t.Errorf("room %d, less than the %d bytes of the bodies from the XML on", r.room, need)
	}
	if plain := reserveParameters([]any{id, small, []byte(xml)}); !bytes.Equal(plain[2].([]byte), []byte(xml)) || plain[1] != small {
		t.Errorf("no large text, yet the arguments changed: %v", plain)
	}
	if _, ok := reserveParameters([]any{small, xml[:largeText-1]})[1].(string); !ok {
		t.Error("a text under largeText was reserved")
	}
}

// A statement's first large array of documents (a batch's jsonb[]) is queued as
// reservedDocuments that makes room for it and every argument after it; a small one is not.
func TestReserveParameters_Documents(t *testing.T) {
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	small := [][]byte{[]byte(`{}`), nil}
	befores := [][]byte{[]byte(`{"k":"` + strings.Repeat("v", 3000) + `"}`), nil}
	afters := [][]byte{[]byte(`{"k":"` + strings.Repeat("w", 5000) + `"}`), []byte(`[]`)}
	args := reserveParameters([]any{ids, small, befores, afters})
	if _, ok := args[1].([][]byte); !ok {
		t.Errorf("a small array of documents was reserved: %T", args[1])
	}
	r, ok := args[2].(reservedDocuments)
	if !ok {
		t.Fatalf("the first large array of documents is %T, want it reserved", args[2])
	}
	if need := 3000 + 5000 + 2*20 + 4*5; r.room < need {
		t.Errorf("room %d, less than the %d bytes of the two arrays", r.room, need)
	}
	if _, ok := args[3].([][]byte); !ok {
		t.Errorf("the array after the reserved one changed: %T", args[3])
	}
}

// reservedDocuments is encoded as its documents would be as a jsonb[] (NULL elements, an
// empty array and a NULL array included), in the buffer grown once.
func TestReservedDocumentsEncoding(t *testing.T) {
	m := pgtype.NewMap()
	registerUUID(m)
	registerReservedText(m)
	format := m.FormatCodeForOID(pgtype.JSONBArrayOID)
	for _, docs := range [][][]byte{
		{[]byte(`{"a":1}`), nil, []byte(`"` + strings.Repeat("x", 4000) + `"`)},
		{},
		nil,
	} {
		want, err := m.Encode(pgtype.JSONBArrayOID, format, docs, []byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Encode(pgtype.JSONBArrayOID, format, reservedDocuments{docs: docs, room: 10_000}, []byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%d documents: encoded %.60q…, want %.60q…", len(docs), got, want)
		}
		if docs != nil && cap(got) < len("prefix")+10_000 {
			t.Errorf("%d documents: the buffer holds %d bytes, not the room reserved", len(docs), cap(got))
		}
	}
}

// A reservedText is encoded as its text, to a text and to a jsonb parameter, with the plan
// registered (the buffer grown first) and without it (a driver.Valuer of its text).
func TestReservedTextEncoding(t *testing.T) {
	text := `{"xml":"` + strings.Repeat("a", 3000) + `"}`
	registered := pgtype.NewMap()
	registerUUID(registered)
	registerReservedText(registered)
	for name, m := range map[string]*pgtype.Map{"registered": registered, "plain": pgtype.NewMap()} {
		for _, oid := range []uint32{pgtype.TextOID, pgtype.JSONBOID, pgtype.JSONOID, pgtype.VarcharOID} {
			format := m.FormatCodeForOID(oid)
			want, err := m.Encode(oid, pgtype.TextFormatCode, text, []byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Encode(oid, format, reservedText{text: text, room: 10_000}, []byte("prefix"))
			if err != nil {
				t.Fatalf("%s, oid %d: %v", name, oid, err)
			}
			if format != pgtype.TextFormatCode || !bytes.Equal(got, want) {
				t.Errorf("%s, oid %d: format %d, encoded %.40q…, want the text's %.40q…", name, oid, format, got, want)
			}
			if name == "registered" && oid == pgtype.TextOID && cap(got) < len("prefix")+10_000 {
				t.Errorf("the buffer holds %d bytes, not the room reserved", cap(got))
			}
		}
	}
}
