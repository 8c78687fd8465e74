package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"
)

// TestKubectlDeleteMirrorPodReturns deletes mirror pods with kubectl's default --wait, 50 times:
// each delete must return, although the kubelet deletes the mirror pod and creates a new one at
// once; with no latency between the kubelet and the API server, it could do both between kubectl's
// GET and its LIST, and kubectl then waited for good for a DELETED event that had already
// happened. Each try takes as long as the kubelet takes to react, a second or two, so ten pods
// are deleted side by side, five times each (once each under -race).
func TestKubectlDeleteMirrorPodReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kubectl 50 times")
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	// Not parallel: ten kubectl processes at once would starve the other tests' kubectl.
	const pods = 10
	// Under -race one round: the ten deletes side by side already run every path of the API
	// server and the kubelet that the next rounds repeat. The hang the rounds look for comes of
	// timing, not of a data race, and the plain suite's fifty tries keep its odds.
	rounds := 5
	if raceEnabled {
		rounds = 1
	}
	dir := t.TempDir()
	for i := range pods {
		name := "m" + strconv.Itoa(i)
		writeManifest(t, dir, name+".yaml", podYAML(name, "", "busybox:1.36"))
	}
	cfg := testConfig(dir, false)
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg.APILatency = defaultAPILatency
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)

	errs := make(chan error, pods)
	for i := range pods {
		name := "m" + strconv.Itoa(i) + "-" + testNode
		go func() { errs <- deleteMirrorPodRepeatedly(t, log, cfg.WriteKubeconfig, name, rounds) }()
	}
	for range pods {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
}

// deleteMirrorPodRepeatedly waits for the mirror pod default/name, deletes it with kubectl and
// waits for the kubelet to create it again, n times.
func deleteMirrorPodRepeatedly(t *testing.T, log *traceLog, kubeconfig, name string, n int) error {
	pod := "default/" + name
	isMirrorCreated := func(e traceEvent) bool {
		return e.Component == "mirror" && e.Event == "create" && e.Pod == pod && e.Reason == ""
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	from, _, err := log.waitFor(ctx, 0, "mirror pod creation of "+pod, isMirrorCreated)
	cancel()
	if err != nil {
		return err
	}
	home := t.TempDir()
	for i := range n {
		// A delete that hangs is a failure, not a test that runs until its binary's timeout.
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache"),
			"delete", "pod", name)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECTL_KUBERC=false")
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			cancel()
			return fmt.Errorf("try %d: kubectl delete pod %s (default --wait) did not return within %v", i+1, name, waitTimeout)
		}
		if err != nil {
			cancel()
			return fmt.Errorf("try %d: kubectl delete pod %s: %v\n%s", i+1, name, err, out)
		}
		// The next delete needs the new mirror pod.
		from, _, err = log.waitFor(ctx, from+1, fmt.Sprintf("mirror pod re-creation %d of %s", i+1, pod), isMirrorCreated)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLatencyTransport checks that a request is sent only once the latency has passed, and not
// at all when its context ends first. The bubble's clock is virtual: nothing waits for real.
func TestLatencyTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent time.Time
		next := roundTripFunc(func(*http.Request) (*http.Response, error) {
			sent = time.Now()
			return &http.Response{StatusCode: http.StatusOK}, nil
		})
		clk := clock.RealClock{}
		if got := withLatency(next, clk, 0); got == nil {
			t.Fatal("withLatency(next, 0) = nil, want next")
		}
		rt := withLatency(next, clk, 20*time.Millisecond)
		req, _ := http.NewRequest(http.MethodGet, "http://api/api/v1/pods", nil)
		start := time.Now()
		if _, err := rt.RoundTrip(req); err != nil {
			t.Errorf("RoundTrip() error = %v, want nil", err)
		}
		if got := sent.Sub(start); got != 20*time.Millisecond {
			t.Errorf("request sent %v after RoundTrip, want 20ms", got)
		}

		sent = time.Time{}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		if _, err := rt.RoundTrip(req.WithContext(ctx)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("RoundTrip() with a context ending first error = %v, want context.DeadlineExceeded", err)
		}
		if !sent.IsZero() {
			t.Errorf("request sent at %v although its context ended first", sent)
		}
	})
}
