package fakeapiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// BenchmarkLeaseBesideHTTPCreates renews 1,000 nodes' leases, each node every 2 s as its own
// user (node-high), for 20 s while 32 clients create pods over HTTP with a system:masters token
// (exempt), as cmd/fleetload does. It reports the longest lease update (lease-max-ms), the share
// of the renewals the nodes would have made had no update waited (renewed-%, at most 100), and
// the creates' rate (pods/s). The stretch is wall time: the point is how long a renewal waits
// behind a steady stream of exempt requests, which strict exempt-first turns left without bound.
func BenchmarkLeaseBesideHTTPCreates(b *testing.B) {
	const nodes, clients = 1000, 32
	const every, stretch = 2 * time.Second, 20 * time.Second
	ctx := context.Background()
	var maxWait time.Duration
	var renewed, created int64
	for range b.N {
		opts := testOptions()
		opts.BearerToken = "secret"
		srv := newServer(b, opts)
		h := srv.Handler()
		var stop atomic.Bool
		var wg sync.WaitGroup
		var creates, renews, longest atomic.Int64
		for c := range clients {
			wg.Go(func() {
				for i := 0; !stop.Load(); i++ {
					r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/pods",
						strings.NewReader(fmt.Sprintf(`{"metadata":{"name":"c%d-%d"},"spec":{"nodeName":"sim-%03d","containers":[{"name":"c","image":"i"}]}}`, c, i, i%nodes)))
					r.Header.Set("Authorization", "Bearer secret")
					r.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusCreated {
						b.Errorf("POST pod = %d %s", w.Code, w.Body)
						return
					}
					creates.Add(1)
				}
			})
		}
		for n := range nodes {
			d := srv.DirectAs("kubelet", authenticationv1.UserInfo{Username: fmt.Sprintf("system:node:sim-%03d", n), Groups: []string{"system:nodes", "system:authenticated"}})
			wg.Go(func() {
				l, err := d.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sim-%03d", n), Namespace: "kube-node-lease"},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x")}})
				if err != nil {
					b.Error(err)
					return
				}
				for !stop.Load() {
					start := time.Now()
					l.Spec.RenewTime = &metav1.MicroTime{Time: start}
					if l, err = d.UpdateLease(ctx, l); err != nil {
						b.Error(err)
						return
					}
					renews.Add(1)
					w := int64(time.Since(start))
					for cur := longest.Load(); w > cur && !longest.CompareAndSwap(cur, w); cur = longest.Load() {
					}
					time.Sleep(every)
				}
			})
		}
		time.Sleep(stretch)
		stop.Store(true)
		wg.Wait()
		maxWait = max(maxWait, time.Duration(longest.Load()))
		renewed += renews.Load()
		created += creates.Load()
	}
	b.ReportMetric(float64(maxWait)/float64(time.Millisecond), "lease-max-ms")
	// A node renews as it starts and then every 2 s after the last renewal returned: 11
	// renewals in the 20 s if none waited (the last as the stretch ends, before stop is set,
	// since the node started before the stretch did).
	b.ReportMetric(100*float64(renewed)/float64(int64(b.N)*nodes*(int64(stretch/every)+1)), "renewed-%")
	b.ReportMetric(float64(created)/(float64(b.N)*stretch.Seconds()), "pods/s")
}
