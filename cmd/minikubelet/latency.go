package main

import (
	"fmt"
	"net/http"
	"time"

	"k8s.io/utils/clock"
)

// defaultAPILatency is the kubelet's client-side latency to the API server that run models by
// default: a node reaches its control plane over a network, and each write waits for the API
// server's storage, tens of milliseconds in all, while the embedded API server answers over
// loopback in well under one. With no latency the simulated kubelet reacts to kubectl faster
// than kubectl itself: after `kubectl delete pod` of a mirror pod it deleted and recreated the
// mirror between kubectl's GET and its LIST, so that kubectl's default --wait watched for a
// DELETED event that had already happened and never returned. The kubelet's delete and create
// now land at least this far apart; 20ms was not enough when kubectl shared a busy machine.
const defaultAPILatency = 50 * time.Millisecond

// latencyTransport delays every request by a fixed time before sending it, on the clock of the
// run: the network between the kubelet and the API server. It only delays the request's start,
// so a watch opens late but streams its events at once.
type latencyTransport struct {
	next    http.RoundTripper
	clock   clock.Clock
	latency time.Duration
}

// withLatency wraps rt in a latencyTransport, or returns it as is for a latency of zero.
func withLatency(rt http.RoundTripper, clk clock.Clock, latency time.Duration) http.RoundTripper {
	if latency <= 0 {
		return rt
	}
	return &latencyTransport{next: rt, clock: clk, latency: latency}
}

// RoundTrip waits out the latency, or the request's context, then sends the request.
func (t *latencyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	timer := t.clock.NewTimer(t.latency)
	defer timer.Stop()
	select {
	case <-timer.C():
	case <-req.Context().Done():
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, req.Context().Err())
	}
	return t.next.RoundTrip(req)
}
