package postgres

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/provider/coreapi/internal/core"
)

// storableText refuses text PostgreSQL cannot store: a NUL character (U+0000), which JSON
// allows (as \u0000) but neither text nor jsonb columns accept. fields maps a body pointer to
// its value; objects maps a pointer to a flat JSON object whose keys and string values are
// checked too. Catching it here keeps one odd request from failing a whole batch of others.
func storableText(fields map[string]*string, objects map[string]json.RawMessage) error {
	var bad []string
	for pointer, v := range fields {
		if v != nil && strings.ContainsRune(*v, 0) {
			bad = append(bad, pointer)
		}
	}
	for pointer, raw := range objects {
		if raw == nil {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return core.Errorf(core.EValidation, "Field %s must be a JSON object.", pointer)
		}
		for k, v := range m {
			s, _ := v.(string)
			if strings.ContainsRune(k, 0) || strings.ContainsRune(s, 0) {
				bad = append(bad, pointer+"/"+k)
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	e := &core.Error{Code: core.EValidation, Message: "Text may not contain the NUL character (U+0000)."}
	for _, p := range bad {
		e.Fields = append(e.Fields, core.FieldError{Location: "body", Pointer: p, Code: "format", Message: e.Message})
	}
	return e
}
