package httpapi_test

import (
	"testing"
	"fmt"

	"github.com/provider/coreapi/internal/apitest"
)

func TestZZScratch(t *testing.T) {
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	id := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))["id"].(string)
	ev := sendTest(t, env, token, id)["event_id"].(string)
	_ = ev
	reqs := []apitest.Request{
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&created_after=0001-01-01T00:00:00Z&created_before=9999-12-31T23:59:59Z"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&created_after=9999-12-31T23:59:59Z"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&created_before=0001-01-01T00:00:00Z"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&created_after=9999-12-31T23:59:59-23:59"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&created_before=0001-01-01T00:00:00%2B23:59"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&cursor=zzz"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&cursor=00000000-0000-0000-0000-000000000000"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&type=nope"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&limit=0"},
		{Method: "GET", Path: "/v1/events?organization_id=" + org + "&limit=100000"},
		{Method: "GET", Path: "/v1/events/not-a-uuid"},
		{Method: "GET", Path: "/v1/webhook-endpoints/" + id + "/deliveries?cursor=zzz"},
		{Method: "GET", Path: "/v1/webhook-endpoints/" + id + "/deliveries?event_type=nope"},
		{Method: "GET", Path: "/v1/webhook-endpoints/" + id + "/deliveries?status=abandoned"},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/recover", Body: `{"since":"9999-12-31T23:59:59Z"}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/recover", Body: `{"since":"9999-12-31T23:59:59-23:59"}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/recover", Body: `{"since":"0001-01-01T00:00:00+23:59"}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/recover", Body: `{"since":"1969-12-31T23:59:59Z"}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/recover", Body: `{}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/rotate-secret", Body: `{"grace_period_seconds":9223372036854775807}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/rotate-secret", Body: `{"grace_period_seconds":-1}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"url":"http://127.0.0.1:0/x"}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"url":"http://[::1%25eth0]:80/x"}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"url":"http://a\u0000b/x"}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"enabled_events":[]}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"enabled_events":["api_key.created","api_key.created"]}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"enabled_events":["*"]}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"description":"a\u0000b"}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"status":null}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"url":null}`},
		{Method: "PATCH", Path: "/v1/webhook-endpoints/" + id, Body: `{"enabled_events":null}`},
		{Method: "POST", Path: "/v1/webhook-endpoints", Body: `{"organization_id":"` + org + `","url":"http://x.example/","enabled_events":["api_key.created"],"description":"a\u0000b"}`},
		{Method: "POST", Path: "/v1/webhook-endpoints", Body: `{"organization_id":"` + org + `","url":"http://x.example:65536/","enabled_events":["api_key.created"]}`},
		{Method: "POST", Path: "/v1/webhook-endpoints", Body: `{"organization_id":"` + org + `","url":"http://x.example/\u0000","enabled_events":["api_key.created"]}`},
		{Method: "POST", Path: "/v1/webhook-endpoints", Body: `{"organization_id":"` + org + `","url":"http://x.example/` + "\\ud800" + `","enabled_events":["api_key.created"]}`},
		{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/deliveries/00000000-0000-0000-0000-000000000000/resend"},
		{Method: "GET", Path: "/v1/events/stream?organization_id=" + org + "&types=nope"},
	}
	for _, r := range reqs {
		r.Token = token
		resp := env.Do(r)
		fmt.Printf("%d %s %s %s\n", resp.Status, r.Method, r.Path, r.Body)
		if resp.Status >= 500 {
			t.Errorf("%s %s %s: %d %s", r.Method, r.Path, r.Body, resp.Status, resp.Body)
		}
	}
}
