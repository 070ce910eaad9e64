//go:build reliability

package reliability_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowClientsAreCutOff holds connections open the ways a slow or hostile client would
// and measures how long the real server (cmd/coreapi's http.Server) lets them: headers that
// never end (ReadHeaderTimeout 5 s), a body dripped a byte at a time (ReadTimeout 30 s), and
// a body that never ends (the 1 MiB bound answers 413 long before any timeout).
func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	s := startServer(t, c.dsn(), "")

	// drip writes head, then one byte of more every interval until the server answers or
	// closes, and returns what it answered and when.
	drip := func(t *testing.T, head, more string, interval time.Duration) (string, time.Duration) {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		answered := make(chan string, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				answered <- "closed: " + err.Error()
				return
			}
			resp.Body.Close()
			answered <- resp.Status
		}()
		for i := 0; ; i++ {
			select {
			case a := <-answered:
				return a, time.Since(start)
			case <-time.After(interval):
			}
			if time.Since(start) > 90*time.Second {
				t.Fatal("still connected after 90 s")
			}
			if _, err := io.WriteString(conn, more[i%len(more):i%len(more)+1]); err != nil {
				return "closed on write: " + err.Error(), time.Since(start)
			}
		}
	}

	t.Run("HeadersThatNeverEnd", func(t *testing.T) {
		t.Parallel()
		answer, took := drip(t, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "X-Slow: abcdefgh\r\n", 500*time.Millisecond)
		if took > 8*time.Second {
			t.Errorf("cut off after %v, want about 5 s", took)
		}
		t.Logf("never-ending headers: %s after %v", answer, took.Round(time.Millisecond))
	})
	t.Run("BodyDrippedByteByByte", func(t *testing.T) {
		t.Parallel()
		head := "POST /v1/organizations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev:operator\r\n" +
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
		answer, took := drip(t, head, `{"legal_name_en":"`+strings.Repeat("x", 64), 300*time.Millisecond)
		if took > 35*time.Second || strings.HasPrefix(answer, "5") {
			t.Errorf("answered %q after %v, want a 4xx or a close at about 30 s", answer, took)
		}
		t.Logf("dripped body: %s after %v", answer, took.Round(time.Millisecond))
	})
	t.Run("BodyThatNeverEnds", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprint(conn, "POST /v1/organizations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev:operator\r\n"+
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := strings.Repeat(" ", 32<<10)
		answered := make(chan string, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				answered <- "closed: " + err.Error()
				return
			}
			resp.Body.Close()
			answered <- resp.Status
		}()
		sent := 0
		for {
			select {
			case a := <-answered:
				if !strings.HasPrefix(a, "413") {
					t.Errorf("answered %q after %d bytes", a, sent)
				}
				t.Logf("never-ending body: %s after %d KiB in %v", a, sent>>10, time.Since(start).Round(time.Millisecond))
				return
			default:
			}
			if time.Since(start) > 60*time.Second {
				t.Fatal("no answer after 60 s")
			}
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				a := <-answered
				t.Logf("never-ending body: %s after %d KiB in %v", a, sent>>10, time.Since(start).Round(time.Millisecond))
				if !strings.HasPrefix(a, "413") {
					t.Errorf("answered %q after %d bytes", a, sent)
				}
				return
			}
			sent += len(chunk)
		}
	})
}
