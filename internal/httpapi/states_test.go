package httpapi_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// A state family is an enum component of the document whose name ends in Status, Availability
// or Activation (OrganizationLifecycleStatus, SupportCaseStatus, PlanActivation, …). Every value
// of every family must be reachable through the HTTP API alone: TestEveryDocumentedStateIsReachable
// reads the families from openapi.yaml and fails for a value that has neither a reacher nor an
// entry in statesComingLater. A value added to the document without a path to it fails here.

// stateReacher drives a fresh organization (or the catalogue) into one value of a family using
// only HTTP requests to env — never env.Exec or another direct database write — and returns the
// resource as the API last answered it: the object whose property referring to the family must
// hold the value (for example a subscription object with "service_status": "degraded").
type stateReacher func(t *testing.T, env *apitest.Env) map[string]any

// stateReachers maps "Family.value" to its reacher. Register with reachable in the test file of
// the feature that makes the value reachable, as a package-level var:
//
//	var _ = reachable("SupportCaseStatus", "resolved", func(t *testing.T, env *apitest.Env) map[string]any { … })
var stateReachers = map[string]stateReacher{}

func reachable(family, value string, reach stateReacher) bool {
	key := family + "." + value
	if _, dup := stateReachers[key]; dup {
		panic("two reachers for " + key)
	}
	stateReachers[key] = reach
	return true
}

// statesComingLater are values that later issues drive (billing, webhook operations); each names
// the issue that adds its reacher to this test.
var statesComingLater = map[string]string{
	// Generation issues only documents that pass validation, so no HTTP request sequence
	// makes a document the sandbox authority rejects; TestTaxSubmission/FailingValidation
	// alters a stored one to prove these outcomes.
	"TaxInvoiceSubmissionStatus.NOT_REPORTED": "issue 27: a document the authority rejects (none can be generated)",
	"TaxInvoiceSubmissionStatus.NOT_CLEARED":  "issue 27: a document the authority rejects (none can be generated)",
}

// notStateFamilies are enum components whose names match but which describe a result, not a
// state a resource is in.
var notStateFamilies = map[string]string{
	"ShortAddressStatus": "the outcome of one address lookup",
}

func TestEveryDocumentedStateIsReachable(t *testing.T) {
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	type family struct {
		name   string
		values []string
	}
	var families []family
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		if s == nil || len(s.Enum) == 0 || notStateFamilies[name] != "" {
			continue
		}
		if !strings.HasSuffix(name, "Status") && !strings.HasSuffix(name, "Availability") && !strings.HasSuffix(name, "Activation") {
			continue
		}
		f := family{name: name}
		for _, v := range s.Enum {
			f.values = append(f.values, v.(string))
		}
		families = append(families, f)
	}
	sort.Slice(families, func(i, j int) bool { return families[i].name < families[j].name })
	if len(families) < 15 {
		t.Fatalf("found %d state families in the document, want at least the specification's 15", len(families))
	}

	// The property names that refer to each family, e.g. SupportCaseStatus → "status".
	properties := map[string]map[string]bool{}
	for _, ref := range doc.Components.Schemas {
		if ref.Value == nil {
			continue
		}
		for prop, p := range ref.Value.Properties {
			if name, ok := strings.CutPrefix(p.Ref, "#/components/schemas/"); ok {
				if properties[name] == nil {
					properties[name] = map[string]bool{}
				}
				properties[name][prop] = true
			}
		}
	}

	known := map[string]bool{}
	env := apitest.New(t)
	for _, f := range families {
		for _, value := range f.values {
			key := f.name + "." + value
			known[key] = true
			t.Run(key, func(t *testing.T) {
				t.Parallel()
				if issue, later := statesComingLater[key]; later {
					if stateReachers[key] != nil {
						t.Fatalf("%s has a reacher: remove it from statesComingLater", key)
					}
					t.Skipf("reached by %s", issue)
				}
				reach := stateReachers[key]
				if reach == nil {
					t.Fatalf("no request sequence reaches %s through the API: register a reacher", key)
				}
				obj := reach(t, env)
				for prop := range properties[f.name] {
					if got, ok := obj[prop]; ok {
						if got != value {
							t.Fatalf("%s = %v after the reacher, want %q", prop, got, value)
						}
						return
					}
				}
				t.Fatalf("the reacher's object %v has no property referring to %s", obj, f.name)
			})
		}
	}
	t.Run("NoStaleEntries", func(t *testing.T) {
		for key := range stateReachers {
			if !known[key] {
				t.Errorf("reacher for %s, which the document does not list", key)
			}
		}
		for key := range statesComingLater {
			if !known[key] {
				t.Errorf("statesComingLater names %s, which the document does not list", key)
			}
		}
	})
}
