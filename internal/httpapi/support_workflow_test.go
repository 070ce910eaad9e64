package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// pathTo is the operator's shortest way through the support workflow from open to each status.
var pathTo = map[string][]string{
	"open":                nil,
	"in_progress":         {"in_progress"},
	"waiting_on_customer": {"in_progress", "waiting_on_customer"},
	"resolved":            {"in_progress", "waiting_on_customer", "resolved"},
	"closed":              {"in_progress", "waiting_on_customer", "resolved", "closed"},
}

// Every support case status is reachable through the API: a customer opens the case and the
// operator moves it.
var (
	_ = reachable("SupportCaseStatus", "open", reachSupportStatus("open"))
	_ = reachable("SupportCaseStatus", "in_progress", reachSupportStatus("in_progress"))
	_ = reachable("SupportCaseStatus", "waiting_on_customer", reachSupportStatus("waiting_on_customer"))
	_ = reachable("SupportCaseStatus", "resolved", reachSupportStatus("resolved"))
	_ = reachable("SupportCaseStatus", "closed", reachSupportStatus("closed"))
)

func reachSupportStatus(status string) stateReacher {
	return func(t *testing.T, env *apitest.Env) map[string]any {
		return supportFixtureOn(t, env).reach(t, status)
	}
}

// reach opens a case and has the operator move it to status; it returns the case as last answered.
func (f *supportFixture) reach(t testing.TB, status string) map[string]any {
	t.Helper()
	c := f.open(t, nil)
	for _, next := range pathTo[status] {
		resp := f.patch(apitest.OperatorToken, c["id"].(string), fmt.Sprintf(`{"status":%q}`, next))
		if resp.Status != http.StatusOK {
			t.Fatalf("move to %s: %d %s", next, resp.Status, resp.Body)
		}
		c = resp.JSON(t)
	}
	return c
}

func (f *supportFixture) patch(token, id, body string) *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/support-cases/" + id, Token: token, Body: body})
}

func (f *supportFixture) get(t testing.TB, id string) map[string]any {
	t.Helper()
	resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id, Token: apitest.OperatorToken})
	if resp.Status != http.StatusOK {
		t.Fatalf("get case: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func (f *supportFixture) postMessage(token, id, body string, header http.Header) *apitest.Response {
	b, _ := json.Marshal(map[string]string{"body": body})
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + id + "/messages", Token: token, Body: string(b), Header: header})
}

// changes counts the audit records and webhook events of a case's organization, so a test can
// tell that a request recorded nothing.
func (f *supportFixture) changes() int {
	return f.env.Count("SELECT count(*) FROM audit_events WHERE organization_id = $1", f.orgID) +
		f.env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1", f.orgID)
}

// workflowMoves is docs/design.md, "Support workflow", written out for the HTTP test.
var workflowMoves = map[string]bool{
	"open>in_progress": true, "in_progress>waiting_on_customer": true, "waiting_on_customer>resolved": true,
	"waiting_on_customer>in_progress": true, "resolved>in_progress": true,
	"open>closed": true, "in_progress>closed": true, "waiting_on_customer>closed": true, "resolved>closed": true,
}

// TestSupportCaseUpdate_Transitions tries every status from every status through PATCH: the
// workflow's moves succeed with their resolved_at, audit record and event; every other move is
// 409 and changes nothing; the current status changes nothing.
func TestSupportCaseUpdate_Transitions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	statuses := []string{"open", "in_progress", "waiting_on_customer", "resolved", "closed"}
	for _, from := range statuses {
		for _, to := range statuses {
			t.Run(from+">"+to, func(t *testing.T) {
				t.Parallel()
				f := supportFixtureOn(t, env)
				before := f.reach(t, from)
				id := before["id"].(string)
				recorded := f.changes()
				resp := f.patch(apitest.OperatorToken, id, fmt.Sprintf(`{"status":%q}`, to))
				after := f.get(t, id)
				switch {
				case from == to:
					if resp.Status != http.StatusOK || fmt.Sprint(resp.JSON(t)) != fmt.Sprint(before) || fmt.Sprint(after) != fmt.Sprint(before) {
						t.Errorf("the current status: %d %s, want the case unchanged %v", resp.Status, resp.Body, before)
					}
					if n := f.changes(); n != recorded {
						t.Errorf("a patch that changes nothing recorded %d audit records or events", n-recorded)
					}
				case !workflowMoves[from+">"+to]:
					assertProblem(t, "refused move", resp, http.StatusConflict, "invalid_state_transition")
					if !strings.Contains(string(resp.Body), from) {
						t.Errorf("the refusal does not name the current status %s: %s", from, resp.Body)
					}
					if fmt.Sprint(after) != fmt.Sprint(before) || f.changes() != recorded {
						t.Errorf("a refused move changed the case or recorded something: %v", after)
					}
				default:
					if resp.Status != http.StatusOK {
						t.Fatalf("move: %d %s", resp.Status, resp.Body)
					}
					moved := resp.JSON(t)
					if moved["status"] != to || fmt.Sprint(moved) != fmt.Sprint(after) || moved["updated_at"] == before["updated_at"] ||
						moved["assigned_team"] != before["assigned_team"] || moved["opened_at"] != before["opened_at"] {
						t.Errorf("moved: %v", moved)
					}
					checkResolvedAtOverHTTP(t, before, moved)
					event := "support_case.updated"
					if to == "closed" {
						event = "support_case.closed"
					}
					if n := env.Count("SELECT count(*) FROM audit_events WHERE action = $1 AND resource_id = $2 AND actor_type = 'operator' AND before->>'status' = $3 AND after->>'status' = $4",
						event, id, from, to); n != 1 {
						t.Errorf("%d audit records %s of the move, want 1", n, event)
					}
					if n := env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = $2 AND data->>'id' = $3 AND data->>'updated_at' = $4 AND data->>'status' = $5",
						f.orgID, event, id, moved["updated_at"], to); n != 1 {
						t.Errorf("%d %s events with the moved case, want 1", n, event)
					}
				}
			})
		}
	}
}

// checkResolvedAtOverHTTP: resolving sets resolved_at to the move's instant; reopening a
// resolved case clears it; closing keeps a resolution's time (else the closing's); other moves
// leave it null.
func checkResolvedAtOverHTTP(t *testing.T, before, after map[string]any) {
	t.Helper()
	var want any
	switch {
	case after["status"] == "resolved":
		want = after["updated_at"]
	case after["status"] == "closed" && before["resolved_at"] != nil:
		want = before["resolved_at"]
	case after["status"] == "closed":
		want = after["updated_at"]
	}
	if after["resolved_at"] != want {
		t.Errorf("%v -> %v: resolved_at %v, want %v", before["status"], after["status"], after["resolved_at"], want)
	}
}

func TestSupportCaseUpdate(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)

	t.Run("OperatorOnly", func(t *testing.T) {
		c := f.open(t, nil)
		id := c["id"].(string)
		other := supportFixtureOn(t, f.env)
		recorded := f.changes()
		for name, token := range map[string]string{"the case's organization": f.token, "another organization": other.token} {
			for _, body := range []string{`{"status":"in_progress"}`, `{"assigned_team":"billing"}`, `{}`} {
				assertProblem(t, name+" "+body, f.patch(token, id, body), http.StatusForbidden, "forbidden")
			}
		}
		// Refused alike for an unknown case: the answer tells an organization nothing.
		unknown := uuid.NewString()
		theirs, missing := f.patch(other.token, id, `{"status":"in_progress"}`), f.patch(other.token, unknown, `{"status":"in_progress"}`)
		if problemShape(theirs, id) != problemShape(missing, unknown) {
			t.Errorf("another tenant's case answers unlike a missing one:\n%s\n%s", theirs.Body, missing.Body)
		}
		if got := f.get(t, id); fmt.Sprint(got) != fmt.Sprint(c) || f.changes() != recorded {
			t.Errorf("a refused patch changed the case or recorded something: %v", got)
		}
		// A key holding support:read only lacks the scope.
		key := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
			Body: fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["support:read"]}`, f.orgID)})
		if key.Status != http.StatusCreated {
			t.Fatalf("create key: %d %s", key.Status, key.Body)
		}
		reader := key.JSON(t)["full_key"].(string)
		assertProblem(t, "support:read only", f.patch(reader, id, `{"status":"in_progress"}`), http.StatusForbidden, "insufficient_scope")
		assertProblem(t, "message with support:read only", f.postMessage(reader, id, "hello", nil), http.StatusForbidden, "insufficient_scope")
		if resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id + "/messages", Token: reader}); resp.Status != http.StatusOK {
			t.Errorf("read messages with support:read: %d %s", resp.Status, resp.Body)
		}
	})

	t.Run("AssignedTeam", func(t *testing.T) {
		c := f.open(t, nil)
		id := c["id"].(string)
		resp := f.patch(apitest.OperatorToken, id, `{"assigned_team":"security"}`)
		if resp.Status != http.StatusOK {
			t.Fatalf("reassign: %d %s", resp.Status, resp.Body)
		}
		got := resp.JSON(t)
		if got["assigned_team"] != "security" || got["status"] != "open" || got["updated_at"] == c["updated_at"] {
			t.Errorf("reassigned: %v", got)
		}
		if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'support_case.updated' AND resource_id = $1 AND before->>'assigned_team' = 'support' AND after->>'assigned_team' = 'security'", id); n != 1 {
			t.Errorf("%d audit records of the reassignment", n)
		}
		if got = f.patch(apitest.OperatorToken, id, `{"assigned_team":null}`).JSON(t); got["assigned_team"] != nil {
			t.Errorf("unassigned: %v", got)
		}
		for _, team := range []string{"support", "billing", "security", "provider_ops", "platform"} {
			if got = f.patch(apitest.OperatorToken, id, fmt.Sprintf(`{"status":"in_progress","assigned_team":%q}`, team)).JSON(t); got["assigned_team"] != team || got["status"] != "in_progress" {
				t.Errorf("team %s: %v", team, got)
			}
		}
		for _, body := range []string{`{"assigned_team":"sales"}`, `{"status":"pending"}`, `{"status":null}`, `{"resolved_at":null}`, `[]`} {
			assertProblem(t, body, f.patch(apitest.OperatorToken, id, body), http.StatusBadRequest, "validation_failed")
		}
	})

	t.Run("ClosedIsFinal", func(t *testing.T) {
		c := f.reach(t, "closed")
		id := c["id"].(string)
		recorded := f.changes()
		for _, body := range []string{`{"assigned_team":"billing"}`, `{"status":"in_progress"}`, `{"status":"closed","assigned_team":null}`} {
			assertProblem(t, body, f.patch(apitest.OperatorToken, id, body), http.StatusConflict, "invalid_state_transition")
		}
		assertProblem(t, "close again", f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + id + "/close", Token: apitest.OperatorToken}),
			http.StatusConflict, "invalid_state_transition")
		if got := f.get(t, id); fmt.Sprint(got) != fmt.Sprint(c) || f.changes() != recorded {
			t.Errorf("a closed case changed: %v", got)
		}
	})

	t.Run("ReopenedThenResolvedAgain", func(t *testing.T) {
		c := f.reach(t, "resolved")
		id := c["id"].(string)
		reopened := f.patch(apitest.OperatorToken, id, `{"status":"in_progress"}`).JSON(t)
		if reopened["resolved_at"] != nil {
			t.Errorf("reopened case keeps resolved_at %v", reopened["resolved_at"])
		}
		for _, next := range []string{"waiting_on_customer", "resolved"} {
			c = f.patch(apitest.OperatorToken, id, fmt.Sprintf(`{"status":%q}`, next)).JSON(t)
		}
		if c["resolved_at"] == nil || c["resolved_at"] != c["updated_at"] {
			t.Errorf("resolved again: %v", c)
		}
	})

	t.Run("CustomerClosesFromAnyOpenStatus", func(t *testing.T) {
		for _, from := range []string{"open", "in_progress", "waiting_on_customer", "resolved"} {
			c := f.reach(t, from)
			resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + c["id"].(string) + "/close", Token: f.token})
			if resp.Status != http.StatusOK || resp.JSON(t)["status"] != "closed" {
				t.Errorf("close from %s: %d %s", from, resp.Status, resp.Body)
			}
		}
	})
}

func TestSupportCaseMessages(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)

	t.Run("BothSidesWriteAndRead", func(t *testing.T) {
		c := f.open(t, nil)
		id := c["id"].(string)
		var want []string
		for i := range 5 {
			token, author := f.token, "customer"
			if i%2 == 1 {
				token, author = apitest.OperatorToken, "provider"
			}
			text := fmt.Sprintf("message %d from the %s", i, author)
			resp := f.postMessage(token, id, text, nil)
			if resp.Status != http.StatusCreated {
				t.Fatalf("message %d: %d %s", i, resp.Status, resp.Body)
			}
			m := resp.JSON(t)
			if m["author"] != author || m["body"] != text || m["support_case_id"] != id || m["created_at"] == nil {
				t.Errorf("message %d: %v", i, m)
			}
			want = append(want, fmt.Sprintf("%s|%s|%s", m["id"], author, text))
		}
		for _, token := range []string{f.token, apitest.OperatorToken} {
			for _, limit := range []int{1, 2, 5, 200} {
				if got := f.walkMessages(t, token, id, limit); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("limit %d: read %v, want every message once, oldest first: %v", limit, got, want)
				}
			}
		}
		// Messages change neither the case nor its updated_at.
		if got := f.get(t, id); fmt.Sprint(got) != fmt.Sprint(c) {
			t.Errorf("messages changed the case: %v", got)
		}
		if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'support_case.message_created' AND resource_type = 'support_case' AND resource_id = $1 AND (after->>'body_length')::int > 0 AND NOT after ? 'body'", id); n != 5 {
			t.Errorf("%d audit records of the messages (with the body's length, not the body), want 5", n)
		}
		if n := f.env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'support_case.message_created' AND data->>'support_case_id' = $2 AND data->>'body' LIKE 'message %'", f.orgID, id); n != 5 {
			t.Errorf("%d support_case.message_created events with the message, want 5", n)
		}
		page := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id + "/messages?limit=2", Token: f.token})
		for _, q := range []string{"?limit=0", "?limit=201", "?cursor=", "?cursor=abc"} {
			assertProblem(t, q, f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id + "/messages" + q, Token: f.token}),
				http.StatusBadRequest, "validation_failed")
		}
		if page.JSON(t)["next_cursor"] == nil {
			t.Errorf("first page of 2 of 5 messages has no next_cursor: %s", page.Body)
		}
	})

	t.Run("CustomerAnswerResumesTheCase", func(t *testing.T) {
		c := f.reach(t, "waiting_on_customer")
		id := c["id"].(string)
		// The provider's own message leaves the case waiting.
		if resp := f.postMessage(apitest.OperatorToken, id, "Please send the invoice number.", nil); resp.Status != http.StatusCreated {
			t.Fatalf("provider message: %d %s", resp.Status, resp.Body)
		}
		if got := f.get(t, id); got["status"] != "waiting_on_customer" {
			t.Errorf("after the provider's message: %v", got["status"])
		}
		if resp := f.postMessage(f.token, id, "It is INV-0042.", nil); resp.Status != http.StatusCreated {
			t.Fatalf("customer message: %d %s", resp.Status, resp.Body)
		}
		got := f.get(t, id)
		if got["status"] != "in_progress" || got["updated_at"] == c["updated_at"] || got["resolved_at"] != nil {
			t.Errorf("after the customer's answer: %v", got)
		}
		if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'support_case.updated' AND resource_id = $1 AND actor_type = 'organization' AND after->>'status' = 'in_progress'", id); n != 1 {
			t.Errorf("%d audit records of the customer's answer moving the case", n)
		}
		if n := f.env.Count("SELECT count(*) FROM webhook_events WHERE type = 'support_case.updated' AND data->>'id' = $1 AND data->>'status' = 'in_progress' AND organization_id = $2", id, f.orgID); n != 2 {
			t.Errorf("%d support_case.updated events to in_progress, want 2 (the operator's move and the answer)", n)
		}
		// On any other open status a customer's message moves nothing.
		for _, status := range []string{"open", "in_progress", "resolved"} {
			c := f.reach(t, status)
			if resp := f.postMessage(f.token, c["id"].(string), "Any news?", nil); resp.Status != http.StatusCreated {
				t.Fatalf("%s: %d %s", status, resp.Status, resp.Body)
			}
			if got := f.get(t, c["id"].(string)); fmt.Sprint(got) != fmt.Sprint(c) {
				t.Errorf("a customer's message on a %s case changed it: %v", status, got)
			}
		}
	})

	t.Run("ClosedCaseTakesNoMessages", func(t *testing.T) {
		c := f.reach(t, "closed")
		id := c["id"].(string)
		recorded := f.changes()
		for _, token := range []string{f.token, apitest.OperatorToken} {
			assertProblem(t, "message on a closed case", f.postMessage(token, id, "Hello?", nil), http.StatusConflict, "invalid_state_transition")
		}
		if n := f.env.Count("SELECT count(*) FROM support_case_messages WHERE support_case_id = $1", id); n != 0 || f.changes() != recorded {
			t.Errorf("%d messages stored on a closed case", n)
		}
		if resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id + "/messages", Token: f.token}); resp.Status != http.StatusOK {
			t.Errorf("a closed case's messages stay readable: %d %s", resp.Status, resp.Body)
		}
	})

	t.Run("Bounds", func(t *testing.T) {
		id := f.open(t, nil)["id"].(string)
		for _, n := range []int{1, 8000} {
			if resp := f.postMessage(f.token, id, strings.Repeat("é", n), nil); resp.Status != http.StatusCreated {
				t.Errorf("%d characters: %d %s", n, resp.Status, resp.Body)
			}
		}
		for name, body := range map[string]string{
			"empty": `{"body":""}`, "8001 characters": `{"body":"` + strings.Repeat("a", 8001) + `"}`, "no body": `{}`,
			"a number": `{"body":1}`, "null": `{"body":null}`, "unknown property": `{"body":"a","author":"provider"}`, "NUL": `{"body":"a\u0000b"}`,
		} {
			resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + id + "/messages", Token: f.token, Body: body})
			assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
		}
		if n := f.env.Count("SELECT count(*) FROM support_case_messages WHERE support_case_id = $1", id); n != 2 {
			t.Errorf("%d messages stored, want the 2 valid ones", n)
		}
	})

	t.Run("AnotherTenantsCase", func(t *testing.T) {
		id := f.open(t, nil)["id"].(string)
		intruder := supportFixtureOn(t, f.env)
		unknown := uuid.NewString()
		theirs, missing := f.postMessage(intruder.token, id, "Let me in", nil), f.postMessage(intruder.token, unknown, "Let me in", nil)
		assertProblem(t, "write to theirs", theirs, http.StatusNotFound, "not_found")
		if problemShape(theirs, id) != problemShape(missing, unknown) {
			t.Errorf("another tenant's case answers unlike a missing one:\n%s\n%s", theirs.Body, missing.Body)
		}
		read := func(caseID string) *apitest.Response {
			return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + caseID + "/messages", Token: intruder.token})
		}
		theirs, missing = read(id), read(unknown)
		assertProblem(t, "read theirs", theirs, http.StatusNotFound, "not_found")
		if problemShape(theirs, id) != problemShape(missing, unknown) {
			t.Errorf("another tenant's messages answer unlike a missing case's:\n%s\n%s", theirs.Body, missing.Body)
		}
		if n := f.env.Count("SELECT count(*) FROM support_case_messages WHERE support_case_id = $1", id); n != 0 {
			t.Errorf("%d messages stored by an intruder", n)
		}
	})

	t.Run("IdempotentReplay", func(t *testing.T) {
		id := f.open(t, nil)["id"].(string)
		key := http.Header{"Idempotency-Key": {"message-" + uuid.NewString()}}
		first := f.postMessage(f.token, id, "Sent once, whatever the retries.", key)
		replay := f.postMessage(f.token, id, "Sent once, whatever the retries.", key)
		if first.Status != http.StatusCreated || replay.Status != http.StatusCreated || string(first.Body) != string(replay.Body) ||
			replay.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("replay: %d %s / %d %s %v", first.Status, first.Body, replay.Status, replay.Body, replay.Header)
		}
		assertProblem(t, "same key, other body", f.postMessage(f.token, id, "Another text", key), http.StatusUnprocessableEntity, "idempotency_key_reused")
		if n := f.env.Count("SELECT count(*) FROM support_case_messages WHERE support_case_id = $1", id); n != 1 {
			t.Errorf("%d messages for one key, want 1", n)
		}
		if n := f.env.Count("SELECT count(*) FROM webhook_events WHERE type = 'support_case.message_created' AND data->>'support_case_id' = $1", id); n != 1 {
			t.Errorf("%d events for one key, want 1", n)
		}
	})
}

// walkMessages reads every page of a case's messages as "id|author|body".
func (f *supportFixture) walkMessages(t *testing.T, token, id string, limit int) []string {
	t.Helper()
	var got []string
	for _, m := range walkPages(t, f.env, token, "/v1/support-cases/"+id+"/messages", limit) {
		got = append(got, fmt.Sprintf("%s|%s|%s", m["id"], m["author"], m["body"]))
	}
	return got
}
