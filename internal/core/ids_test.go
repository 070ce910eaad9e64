package core_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestProductAndPlanNamed(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	for name, parse := range map[string]struct {
		named   func(string) (uuid.UUID, error)
		unknown func(string) error
	}{"Product": {core.ProductNamed, core.UnknownProduct}, "Plan": {core.PlanNamed, core.UnknownPlan}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, err := parse.named(strings.ToUpper(id.String())); err != nil || got != id {
				t.Errorf("a UUID in any spelling: %v, %v", got, err)
			}
			// Text that is not a UUID names nothing: the answer of an unknown id, naming the text.
			_, err := parse.named("growth")
			if want := parse.unknown("growth"); !reflect.DeepEqual(err, want) || codeOf(err) != core.EUnprocessable {
				t.Errorf("not a UUID: %v, want %v", err, want)
			}
		})
	}
}
