package einvoice

import (
	"slices"
	"testing"
	"time"

	"github.com/beevik/etree"
)

// TestCheckRules_IssueDateInSaudiTime: the authority judges "not after the current date"
// (BR-KSA-04) on its own calendar, Saudi time (UTC+3): from 21:00 UTC the Saudi date is the
// next day, and a document dated in Saudi time is not from the future.
func TestCheckRules_IssueDateInSaudiTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, issueDate string
		now             time.Time
		future          bool
	}{
		{"SaudiDateAfterUTCMidnightThere", "2025-03-02", time.Date(2025, 3, 1, 21, 30, 0, 0, time.UTC), false},
		{"SaudiDateAtItsFirstSecond", "2025-03-02", time.Date(2025, 3, 1, 21, 0, 0, 0, time.UTC), false},
		{"TomorrowInSaudiTime", "2025-03-02", time.Date(2025, 3, 1, 20, 59, 59, 0, time.UTC), true},
		{"UTCDate", "2025-03-01", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), false},
		{"DayAfterTheSaudiDate", "2025-03-03", time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := etree.NewDocument()
			if err := doc.ReadFromString(`<Invoice xmlns="` + nsInvoice + `" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">` +
				`<cbc:IssueDate>` + tc.issueDate + `</cbc:IssueDate><cbc:IssueTime>00:30:00</cbc:IssueTime></Invoice>`); err != nil {
				t.Fatal(err)
			}
			r := &report{}
			checkRules(r, readInvoice(doc.Root()), tc.now)
			future := slices.ContainsFunc(r.results, func(res Result) bool { return res.Code == "BR-KSA-04" })
			if future != tc.future {
				t.Errorf("BR-KSA-04 reported: %v, want %v (now %s)", future, tc.future, tc.now)
			}
		})
	}
}
