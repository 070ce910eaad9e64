package core_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestIncident_CheckResolve(t *testing.T) {
	t.Parallel()
	if err := (&core.Incident{Status: core.IncidentOpen}).CheckResolve(); err != nil {
		t.Errorf("an open incident: %v", err)
	}
	err := (&core.Incident{ID: uuid.New(), Status: core.IncidentResolved}).CheckResolve()
	if core.ErrorCode(err) != core.EInvalidTransition || !strings.Contains(err.Error(), "status is resolved") {
		t.Errorf("a resolved incident: %v", err)
	}
}

func TestCheckIncidentSummary(t *testing.T) {
	t.Parallel()
	for summary, ok := range map[string]bool{"Slow.": true, " x ": true, " ": false, "\t\n": false, "": false} {
		err := core.CheckIncidentSummary(summary)
		if ok != (err == nil) || !ok && core.ErrorCode(err) != core.EUnprocessable {
			t.Errorf("%q: %v", summary, err)
		}
	}
}
