package core_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

var supportStatuses = []string{"open", "in_progress", "waiting_on_customer", "resolved", "closed"}

// supportMoveAllowed is docs/design.md, "Support workflow", written out independently of the
// implementation's table.
func supportMoveAllowed(from, to string) bool {
	switch from + ">" + to {
	case "open>in_progress", "in_progress>waiting_on_customer", "waiting_on_customer>resolved", "resolved>closed",
		"waiting_on_customer>in_progress", "resolved>in_progress":
		return true
	}
	return to == "closed" && from != "closed"
}

func supportCaseIn(status string) *core.SupportCase {
	created := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	team := "support"
	c := &core.SupportCase{ID: uuid.New(), Status: status, AssignedTeam: &team, OpenedAt: created, CreatedAt: created, UpdatedAt: created}
	if status == "resolved" || status == "closed" {
		resolved := created.Add(time.Hour)
		c.ResolvedAt = &resolved
	}
	return c
}

func set(v string) core.Field[string] { return core.Field[string]{Set: true, Value: &v} }

func TestSupportCase_Apply(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 2, 8, 0, 0, 0, time.UTC)

	t.Run("EveryMove", func(t *testing.T) {
		t.Parallel()
		for _, from := range supportStatuses {
			for _, to := range supportStatuses {
				name := from + ">" + to
				c := supportCaseIn(from)
				before := *c
				changed, err := c.Apply(core.SupportCaseUpdate{Status: set(to)}, now)
				switch {
				case from == to:
					if err != nil || changed || !reflect.DeepEqual(*c, before) {
						t.Errorf("%s: the current status is not a move: changed %v, err %v, case %+v", name, changed, err, c)
					}
				case !supportMoveAllowed(from, to):
					if core.ErrorCode(err) != core.EInvalidTransition || changed {
						t.Errorf("%s: changed %v, err %v; want invalid_state_transition", name, changed, err)
						continue
					}
					if msg := err.Error(); !strings.Contains(msg, from) || !strings.Contains(msg, c.ID.String()) {
						t.Errorf("%s: message does not name the case and its status: %s", name, msg)
					}
					if !reflect.DeepEqual(*c, before) {
						t.Errorf("%s: a refused move changed the case: %+v", name, c)
					}
				default:
					if err != nil || !changed {
						t.Fatalf("%s: changed %v, err %v", name, changed, err)
					}
					if c.Status != to || !c.UpdatedAt.Equal(now) || c.AssignedTeam != before.AssignedTeam || c.OpenedAt != before.OpenedAt {
						t.Errorf("%s: case %+v", name, c)
					}
					checkResolvedAt(t, name, before, c, now)
				}
			}
		}
	})

	t.Run("AssignedTeam", func(t *testing.T) {
		t.Parallel()
		for _, status := range supportStatuses {
			c := supportCaseIn(status)
			changed, err := c.Apply(core.SupportCaseUpdate{AssignedTeam: set("billing")}, now)
			if status == "closed" {
				if core.ErrorCode(err) != core.EInvalidTransition || *c.AssignedTeam != "support" {
					t.Errorf("closed: err %v, team %v; nothing of a closed case changes", err, *c.AssignedTeam)
				}
				continue
			}
			if err != nil || !changed || *c.AssignedTeam != "billing" || c.Status != status || !c.UpdatedAt.Equal(now) {
				t.Errorf("%s: changed %v, err %v, case %+v", status, changed, err, c)
			}
			changed, err = c.Apply(core.SupportCaseUpdate{AssignedTeam: core.Field[string]{Set: true}}, now)
			if err != nil || !changed || c.AssignedTeam != nil {
				t.Errorf("%s: unassigning: changed %v, err %v, team %v", status, changed, err, c.AssignedTeam)
			}
		}
	})

	t.Run("NothingChanges", func(t *testing.T) {
		t.Parallel()
		for _, status := range supportStatuses {
			for name, u := range map[string]core.SupportCaseUpdate{
				"empty":        {},
				"same team":    {AssignedTeam: set("support")},
				"same both":    {Status: set(status), AssignedTeam: set("support")},
				"status unset": {Status: core.Field[string]{Set: true}},
			} {
				c := supportCaseIn(status)
				before := *c
				if changed, err := c.Apply(u, now); changed || err != nil || !reflect.DeepEqual(*c, before) {
					t.Errorf("%s, %s: changed %v, err %v", status, name, changed, err)
				}
			}
		}
	})

	t.Run("MoveAndTeamTogether", func(t *testing.T) {
		t.Parallel()
		c := supportCaseIn("open")
		if _, err := c.Apply(core.SupportCaseUpdate{Status: set("in_progress"), AssignedTeam: set("security")}, now); err != nil {
			t.Fatal(err)
		}
		if c.Status != "in_progress" || *c.AssignedTeam != "security" {
			t.Errorf("case %+v", c)
		}
		// A refused move changes the team neither.
		if _, err := c.Apply(core.SupportCaseUpdate{Status: set("open"), AssignedTeam: set("billing")}, now); core.ErrorCode(err) != core.EInvalidTransition {
			t.Fatalf("err %v", err)
		}
		if *c.AssignedTeam != "security" {
			t.Errorf("a refused move changed the team to %s", *c.AssignedTeam)
		}
	})
}

// checkResolvedAt: resolving sets resolved_at now; reopening a resolved case clears it;
// closing keeps a resolution's time and sets it otherwise; other moves leave it alone.
func checkResolvedAt(t *testing.T, name string, before core.SupportCase, c *core.SupportCase, now time.Time) {
	t.Helper()
	var want *time.Time
	switch {
	case c.Status == "resolved":
		want = &now
	case c.Status == "closed" && before.ResolvedAt != nil:
		want = before.ResolvedAt
	case c.Status == "closed":
		want = &now
	case before.Status == "resolved":
		want = nil
	default:
		want = before.ResolvedAt
	}
	if (want == nil) != (c.ResolvedAt == nil) || (want != nil && !want.Equal(*c.ResolvedAt)) {
		t.Errorf("%s: resolved_at %v, want %v", name, c.ResolvedAt, want)
	}
}

func TestSupportCase_Close(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 2, 8, 0, 0, 0, time.UTC)
	for _, status := range supportStatuses {
		c := supportCaseIn(status)
		before := *c
		err := c.Close(now)
		if status == "closed" {
			if core.ErrorCode(err) != core.EInvalidTransition || !reflect.DeepEqual(*c, before) {
				t.Errorf("closing a closed case: err %v", err)
			}
			continue
		}
		if err != nil || c.Status != "closed" || c.ResolvedAt == nil {
			t.Errorf("close from %s: err %v, case %+v", status, err, c)
		}
		checkResolvedAt(t, "close from "+status, before, c, now)
	}
}

func TestSupportCase_Messages(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 2, 8, 0, 0, 0, time.UTC)
	for _, status := range supportStatuses {
		c := supportCaseIn(status)
		err := c.CheckMessage()
		if (status == "closed") != (core.ErrorCode(err) == core.EInvalidTransition) {
			t.Errorf("%s: CheckMessage err %v; only a closed case refuses messages", status, err)
		}
		if status == "closed" {
			continue
		}
		changed := c.AnswerFromCustomer(now)
		want := status
		if status == "waiting_on_customer" {
			want = "in_progress"
		}
		if changed != (status == "waiting_on_customer") || c.Status != want {
			t.Errorf("customer answers a case %s: changed %v, status %s, want %s", status, changed, c.Status, want)
		}
	}

	for p, want := range map[*core.Principal]string{
		{Kind: core.PrincipalOperator}:                                 "provider",
		{Kind: core.PrincipalOrganization, OrganizationID: uuid.New()}: "customer",
	} {
		if got := core.SupportAuthorOf(p); got != want {
			t.Errorf("author of %v: %s, want %s", p.Kind, got, want)
		}
	}
}

// TestSupportCaseMessage_AuditSummary: the audit record of a message says how long the body
// is, never the body.
func TestSupportCaseMessage_AuditSummary(t *testing.T) {
	t.Parallel()
	m := &core.SupportCaseMessage{ID: uuid.New(), SupportCaseID: uuid.New(), Author: "customer", Body: "سري secret", CreatedAt: time.Now()}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") || got["body_length"] != 10.0 || got["author"] != "customer" || got["id"] != m.ID.String() ||
		got["support_case_id"] != m.SupportCaseID.String() {
		t.Errorf("audit summary %s", b)
	}
}
