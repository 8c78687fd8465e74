package sources

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// startFileRunner runs a FileRunner with a one-hour period, so that any prompt update must come
// from the watch, and returns its output, a channel closed once the first watcher is in place,
// and a stop function that cancels and waits for Run.
func startFileRunner(t *testing.T, path string) (<-chan podconfig.Update, <-chan struct{}, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	_, tctx := ktesting.NewTestContext(t)
	ctx = klog.NewContext(ctx, klog.FromContext(tctx))
	core := newFile(t, FileOptions{Path: path, NodeName: "node1", Period: time.Hour, Clock: clock.RealClock{}, Tracer: trace.Discard})
	out := make(chan podconfig.Update, 100)
	fw, err := filewatch.NewInotify()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewFileRunner(FileRunnerOptions{Core: core, Clock: clock.RealClock{}, Out: out, Watches: func() FileWatch { return fw.Watch() }})
	if err != nil {
		t.Fatalf("NewFileRunner() error = %v", err)
	}
	watching := make(chan struct{})
	var once sync.Once
	r.watching = func() { once.Do(func() { close(watching) }) }
	done, fwDone := make(chan error, 1), make(chan error, 1)
	go func() { fwDone <- fw.Run(ctx) }()
	go func() { done <- r.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
		if err := <-fwDone; err != nil {
			t.Errorf("file watch Run() = %v, want nil", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return out, watching, stop
}

// await reads updates until one satisfies ok, failing at the test's deadline.
func await(t *testing.T, out <-chan podconfig.Update, what string, ok func(podconfig.Update) bool) podconfig.Update {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case u := <-out:
			if ok(u) {
				return u
			}
		case <-deadline.C:
			t.Fatalf("no update for %s within 10s", what)
		}
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen within 10s", what)
	}
}

func TestFileRunnerPicksUpEditsWithoutWaitingForThePeriod(t *testing.T) {
	dir := t.TempDir()
	web := join(dir, "web.yaml")
	writeFile(t, web, podYAML("web", "web", ""))
	out, watching, stop := startFileRunner(t, dir)

	first := await(t, out, "the first relist", func(u podconfig.Update) bool { return len(u.Pods) == 1 })
	waitClosed(t, watching, "the watch")
	oldUID := first.Pods[0].UID

	writeFile(t, web, podYAML("web", "web", "  labels: {v: \"2\"}\n"))
	edited := await(t, out, "the edit", func(u podconfig.Update) bool { return len(u.Pods) == 1 && u.Pods[0].UID != oldUID })
	if got := edited.Pods[0].Labels["v"]; got != "2" {
		t.Errorf("edited pod label v = %q, want 2", got)
	}

	if err := os.Remove(web); err != nil {
		t.Fatal(err)
	}
	await(t, out, "the delete", func(u podconfig.Update) bool { return len(u.Pods) == 0 })

	writeFile(t, join(dir, ".hidden.yaml"), podYAML("hidden", "hidden", ""))
	writeFile(t, join(dir, "db.yaml"), podYAML("db", "db", ""))
	got := await(t, out, "the new file", func(u podconfig.Update) bool { return len(u.Pods) > 0 })
	if diff := cmp.Diff([]string{"default/db-node1"}, names(&got)); diff != "" {
		t.Errorf("SET after adding a file and a dotfile mismatch (-want +got):\n%s", diff)
	}
	stop()
}

func TestFileRunnerPathMissingThenAppearing(t *testing.T) {
	dir := join(t.TempDir(), "manifests")
	out, watching, stop := startFileRunner(t, dir)
	// The relist and the watch loop both report the missing path with an empty SET.
	for i := 0; i < 2; i++ {
		await(t, out, "an empty SET", func(u podconfig.Update) bool { return len(u.Pods) == 0 && u.Source == podconfig.FileSource })
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, watching, "the watch on the new directory")
	writeFile(t, join(dir, "web.yaml"), podYAML("web", "web", ""))
	await(t, out, "the new manifest", func(u podconfig.Update) bool { return len(u.Pods) == 1 })
	stop()
}

// scriptedTransport answers each request with the next scripted response and records when each
// request arrived. It keeps HTTP in process, so the runner can run inside a synctest bubble.
type scriptedTransport struct {
	mu    sync.Mutex
	steps []scriptedResponse
	times []time.Time
}

type scriptedResponse struct {
	status int
	body   string
}

func (s *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = append(s.times, time.Now())
	if len(s.steps) == 0 {
		return nil, errors.New("script exhausted")
	}
	step := s.steps[0]
	s.steps = s.steps[1:]
	return &http.Response{StatusCode: step.status, Status: http.StatusText(step.status),
		Body: io.NopCloser(bytes.NewBufferString(step.body)), Request: req}, nil
}

func TestHTTPRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
		tctx := klog.NewContext(t.Context(), logger)
		a := string(mustJSON(t, simplePod("a", "nginx")))
		b := string(mustJSON(t, simplePod("b", "nginx")))
		tr := &scriptedTransport{steps: []scriptedResponse{
			{200, a}, {500, ""}, {500, ""}, {500, ""}, {500, ""}, {500, ""}, {200, b},
		}}
		start := time.Now()
		core := newHTTP(t, HTTPOptions{URL: "http://manifests.test/pods", NodeName: "node1", Clock: clock.RealClock{},
			Tracer: trace.Discard, Client: &http.Client{Transport: tr}})
		out := make(chan podconfig.Update, 10)
		ctx, cancel := context.WithCancel(tctx)
		done := make(chan error, 1)
		r, err := NewHTTPRunner(HTTPRunnerOptions{Core: core, Clock: clock.RealClock{}, Out: out})
		if err != nil {
			t.Fatalf("NewHTTPRunner() error = %v", err)
		}
		go func() { done <- r.Run(ctx) }()

		synctest.Wait()
		if u := <-out; !cmp.Equal(names(&u), []string{"default/a-node1"}) {
			t.Errorf("first update = %v, want [default/a-node1]", names(&u))
		}
		time.Sleep(6 * DefaultHTTPCheckFrequency)
		synctest.Wait()
		if u := <-out; !cmp.Equal(names(&u), []string{"default/b-node1"}) {
			t.Errorf("update after the failures = %v, want [default/b-node1]", names(&u))
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}

		var offsets []time.Duration
		for _, at := range tr.times {
			offsets = append(offsets, at.Sub(start))
		}
		wantOffsets := []time.Duration{0, 20 * time.Second, 40 * time.Second, 60 * time.Second, 80 * time.Second, 100 * time.Second, 120 * time.Second}
		if diff := cmp.Diff(wantOffsets, offsets); diff != "" {
			t.Errorf("poll times mismatch (-want +got):\n%s", diff)
		}

		type line struct {
			Msg string
			V   int
		}
		var lines []line
		for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			lines = append(lines, line{e.Message, e.Verbosity})
		}
		const failed = "Failed to read pods from URL"
		want := []line{
			{failed, 0}, {failed, 0}, {failed, 0},
			{failed + ". Dropping verbosity of this message to V(4)", 0},
			{failed, 4},
			{"Successfully read pods from URL", 0},
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("log lines mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestWatchBackoff(t *testing.T) {
	var b watchBackoff
	now := time.Unix(0, 0)
	if b.active(now) {
		t.Errorf("active() before any failure = true, want false")
	}
	var delays []time.Duration
	for i := 0; i < 7; i++ {
		b.next(now)
		delays = append(delays, b.delay)
		if !b.active(now.Add(b.delay-time.Nanosecond)) || b.active(now.Add(b.delay)) {
			t.Errorf("after failure %d the back-off does not last exactly %v", i+1, b.delay)
		}
		now = now.Add(b.delay)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("back-off delays mismatch (-want +got):\n%s", diff)
	}
	b.next(now.Add(41 * time.Second))
	if b.delay != time.Second {
		t.Errorf("delay after a quiet spell = %v, want 1s", b.delay)
	}
}
