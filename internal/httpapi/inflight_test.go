package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// TestInFlight_CountsRequestsNotStreams: the server counts a request in flight from its start
// to its end, and the renewal run gives way meanwhile (docs/design.md, "A run gives way to
// requests"); an event stream counts only until it streams, so that a client holding one open
// does not hold the run to its slow pace for ever.
func TestInFlight_CountsRequestsNotStreams(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	_, token := newOrganization(t, env)
	waitForServing := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(eventually); env.InFlight.Serving() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d requests in flight after %s, want %d", env.InFlight.Serving(), eventually, want)
			}
		}
	}
	waitForServing(0) // the requests above end after their responses are written

	// A request whose body is still coming is in flight, and the API busy.
	body, sender := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, env.URL+"/v1/organizations", body)
	req.Header.Set("Authorization", "Bearer "+apitest.OperatorToken)
	req.Header.Set("Content-Type", "application/json")
	status := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	waitForServing(1)
	if !env.InFlight.Busy() {
		t.Error("a request in flight, and the API not busy")
	}
	if _, err := io.WriteString(sender, minimalOrganization); err != nil {
		t.Fatal(err)
	}
	sender.Close()
	if s := <-status; s != http.StatusCreated {
		t.Fatalf("the request whose body came late: status %d", s)
	}
	waitForServing(0)

	// An open stream is not: it stopped counting before its first event.
	openEventStream(t, env, token, url.Values{})
	if n := env.InFlight.Serving(); n != 0 {
		t.Errorf("an event stream streaming: %d requests in flight, want 0", n)
	}
}
