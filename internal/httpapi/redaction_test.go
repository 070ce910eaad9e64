package httpapi_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
)

// credentialValue recognises the document's example credentials by their form,
// independently of the field that holds them: whole API keys (prefix_secret, the prefix
// alone is public), webhook secrets, access and operator tokens, private keys.
var credentialValue = regexp.MustCompile(`^((sk|cbk)_(sandbox|production)_[A-Za-z0-9]+_[A-Za-z0-9]+|whsec_.+|op_[A-Za-z0-9]{16,}|at_[A-Za-z0-9]{16,}|-----BEGIN [A-Z ]*PRIVATE KEY.*)$`)

// documentSecrets are the credentials of every example of the document, with the secret part
// of each whole API key (an example shows it alone as `secret` or `client_secret`).
func documentSecrets(doc *openapi3.T) map[string]bool {
	secrets := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, m := range mediaTypes(op) {
				for _, example := range examplesOf(m) {
					walkStrings(example, "", func(_, value string) {
						if credentialValue.MatchString(value) {
							secrets[value] = true
							if parts := strings.Split(value, "_"); len(parts) == 4 {
								secrets[parts[3]] = true
							}
						}
					})
				}
			}
		}
	}
	return secrets
}

// mediaTypes are the bodies of op: its request's and its responses'.
func mediaTypes(op *openapi3.Operation) []*openapi3.MediaType {
	var bodies []*openapi3.MediaType
	if op.RequestBody != nil {
		for _, m := range op.RequestBody.Value.Content {
			bodies = append(bodies, m)
		}
	}
	for _, r := range op.Responses.Map() {
		for _, m := range r.Value.Content {
			bodies = append(bodies, m)
		}
	}
	return bodies
}

// TestRedaction_EveryOperationCarryingASecret walks every example body of the document,
// requests and responses of every operation: each field whose example is a credential must
// be one the redaction rule names, and redacting the example must leave no credential. A new
// operation that carries a secret is covered without touching this test.
func TestRedaction_EveryOperationCarryingASecret(t *testing.T) {
	t.Parallel()
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	secrets := documentSecrets(doc)
	carrying := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path + " (" + op.OperationID + ")"
			for _, m := range mediaTypes(op) {
				for _, example := range examplesOf(m) {
					if checkRedaction(t, where, example, secrets) {
						carrying[op.OperationID] = true
					}
				}
			}
		}
	}
	// The operations known to carry one must be among those found: the walk works.
	for _, op := range []string{"createApiKey", "rotateApiKey", "createWebhookEndpoint", "rotateWebhookEndpointSecret", "createOAuthToken"} {
		if !carrying[op] {
			t.Errorf("%s carries a secret in its examples, and the walk did not find it", op)
		}
	}
	names := make([]string, 0, len(carrying))
	for op := range carrying {
		names = append(names, op)
	}
	sort.Strings(names)
	t.Logf("operations carrying a secret, redaction proved: %s", strings.Join(names, ", "))
}

// examplesOf returns the example values of a media type and its schema.
func examplesOf(m *openapi3.MediaType) []any {
	var out []any
	if m.Example != nil {
		out = append(out, m.Example)
	}
	for _, e := range m.Examples {
		if e.Value != nil && e.Value.Value != nil {
			out = append(out, e.Value.Value)
		}
	}
	if m.Schema != nil && m.Schema.Value != nil && m.Schema.Value.Example != nil {
		out = append(out, m.Schema.Value.Example)
	}
	return out
}

// checkRedaction checks one example and tells whether it carries a credential.
func checkRedaction(t *testing.T, where string, example any, secrets map[string]bool) bool {
	t.Helper()
	body, err := json.Marshal(example)
	if err != nil {
		return false
	}
	found := false
	walkStrings(example, "", func(field, value string) {
		if secrets[value] {
			found = true
			if !core.SecretField(field) {
				t.Errorf("%s: field %q holds a credential and the redaction rule does not name it", where, field)
			}
		}
	})
	if !found {
		return false
	}
	redacted, ok := core.RedactBody("application/json", body)
	if !ok {
		t.Errorf("%s: the example could not be redacted", where)
		return true
	}
	var v any
	_ = json.Unmarshal(redacted, &v)
	walkStrings(v, "", func(field, value string) {
		if secrets[value] {
			t.Errorf("%s: %q survives redaction in %s", where, value, field)
		}
	})
	return true
}

// walkStrings calls fn with each string of v and the name of the field holding it.
func walkStrings(v any, field string, fn func(field, value string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			walkStrings(x, k, fn)
		}
	case []any:
		for _, x := range v {
			walkStrings(x, field, fn)
		}
	case string:
		fn(field, v)
	}
}
