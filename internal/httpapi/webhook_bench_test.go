package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// BenchmarkWebhookDelivery is the delivery throughput to a loopback receiver that
// acknowledges at once, with the workers of one server process and of three on one database:
// b.N test events are queued while no worker runs, then the processes start and the clock runs
// until the receiver has them all. It reports deliveries per second. Each run builds its own
// server and database, so give it a fixed count:
//
//	go test -run '^$' -bench BenchmarkWebhookDelivery -benchtime 600x ./internal/httpapi/
func BenchmarkWebhookDelivery(b *testing.B) {
	for _, processes := range []int{1, 3} {
		b.Run(fmt.Sprintf("processes=%d", processes), func(b *testing.B) {
			env := apitest.New(b)
			org, token := newOrganization(b, env)
			recv := newReceiver(b, nil)
			id := createEndpoint(b, env, token, endpointBody(org, recv.URL, "api_key.created"))["id"].(string)
			env.StopWorkers()
			for range b.N {
				sendTest(b, env, token, id)
			}
			b.ResetTimer()
			for range processes {
				env.Sibling()
			}
			recv.waitWithin(b, b.N, 10*time.Minute)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
