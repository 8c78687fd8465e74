package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// diskServer starts a server on dir behind httptest and returns it with a client; stop closes
// both, as a process that exits would.
func diskServer(t *testing.T, dir string, clk *clocktesting.FakeClock) (*fakeapiserver.Server, kubernetes.Interface, func()) {
	t.Helper()
	srv := newServer(t, fakeapiserver.Options{Clock: clk, Tracer: trace.Discard, DataDir: dir})
	ts := httptest.NewServer(srv.Handler())
	client, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ts.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
	t.Cleanup(stop)
	return srv, client, stop
}

type podState struct {
	Name, UID, ResourceVersion, Phase string
}

func podStates(t *testing.T, client kubernetes.Interface) []podState {
	t.Helper()
	list, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []podState
	for _, p := range list.Items {
		out = append(out, podState{p.Namespace + "/" + p.Name, string(p.UID), p.ResourceVersion, string(p.Status.Phase)})
	}
	return out
}

// TestDataDirSurvivesRestart writes objects, stops the server and starts another on the same
// directory: it serves the same objects with the same UIDs and resource versions, continues the
// resource version, draws fresh UIDs, and sends a watch from before the restart 410 Gone.
func TestDataDirSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(start)
	srv, client, stop := diskServer(t, dir, clk)
	pods := client.CoreV1().Pods("default")
	for _, name := range []string{"a", "b", "c"} {
		if _, err := pods.Create(ctx, newPod("default", name, "node-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := pods.Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "c", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := podStates(t, client)
	rv := srv.ResourceVersion()
	stop()

	srv2, client2, _ := diskServer(t, dir, clk)
	if got := srv2.ResourceVersion(); got != rv {
		t.Errorf("ResourceVersion() after restart = %d, want %d", got, rv)
	}
	if diff := cmp.Diff(before, podStates(t, client2)); diff != "" {
		t.Errorf("pods after restart (-before +after):\n%s", diff)
	}
	if _, err := client2.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{}); err != nil {
		t.Errorf("Get(node-1) after restart = %v", err)
	}
	d, err := client2.CoreV1().Pods("default").Create(ctx, newPod("default", "d", "node-1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.ResourceVersion != strconv.FormatUint(rv+1, 10) {
		t.Errorf("resourceVersion of the first write after restart = %s, want %d", d.ResourceVersion, rv+1)
	}
	for _, p := range before {
		if string(d.UID) == p.UID {
			t.Errorf("new pod after restart has UID %s of %s", d.UID, p.Name)
		}
	}
	first := watchFirstEvent(t, &fixture{ts: httptestFor(t, srv2)}, strconv.FormatUint(rv-1, 10))
	if first.Type != "ERROR" || !apierrors.IsResourceExpired(statusError(t, first.Object.Raw)) {
		t.Errorf("watch from before the restart = %s %s, want ERROR 410 Gone", first.Type, first.Object.Raw)
	}
}

// TestDataDirEventsExpireAfterRestart checks that a stored Event still expires: a full TTL after the
// server that loaded it started.
func TestDataDirEventsExpireAfterRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(start)
	_, client, stop := diskServer(t, dir, clk)
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}, Reason: "Pulled", Type: corev1.EventTypeNormal}
	if _, err := client.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	clk.Step(30 * time.Minute)
	_, client2, _ := diskServer(t, dir, clk)
	clk.Step(fakeapiserver.EventTTL - time.Second)
	if _, err := client2.CoreV1().Events("default").Get(ctx, "e", metav1.GetOptions{}); err != nil {
		t.Errorf("Get(event) a second before the TTL after the restart = %v, want it kept", err)
	}
	clk.Step(time.Second)
	if _, err := client2.CoreV1().Events("default").Get(ctx, "e", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(event) a TTL after the restart = %v, want NotFound", err)
	}
}

// TestDataDirInUse starts a second server on a directory a first one holds: New fails at once
// with ErrDataDirInUse instead of corrupting or waiting.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	diskServer(t, dir, clocktesting.NewFakeClock(start))
	_, err := fakeapiserver.New(fakeapiserver.Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard, DataDir: dir})
	if !errors.Is(err, fakeapiserver.ErrDataDirInUse) {
		t.Errorf("New() on a directory in use = %v, want ErrDataDirInUse", err)
	}
}

func httptestFor(t *testing.T, srv *fakeapiserver.Server) *httptest.Server {
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func statusError(t *testing.T, raw []byte) error {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// TestDataDirRefusesDamagedDatabase starts a server on damaged copies of a database: an empty
// file, a file that is not a database, and databases with a page overwritten. Each start fails
// with one line that names the file and wraps ErrCorruptData; none panics, and none starts an
// empty store in place of the lost one.
func TestDataDirRefusesDamagedDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, client, stop := diskServer(t, dir, clocktesting.NewFakeClock(start))
	for i := range 40 {
		if _, err := client.CoreV1().Pods("default").Create(ctx, newPod("default", "pod-"+strconv.Itoa(i), "node-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	good, err := os.ReadFile(filepath.Join(dir, "minikubelet-apiserver.db"))
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	overwrite := func(pg int, b byte) []byte {
		data := bytes.Clone(good)
		for i := pg * page; i < pg*page+64; i++ {
			data[i] = b
		}
		return data
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not a database", bytes.Repeat([]byte("minikubelet "), 2000)},
		{"both meta pages zeroed", append(make([]byte, 2*page), good[2*page:]...)},
		{"freelist page zeroed", overwrite(2, 0)},
		{"a page of ones", overwrite(4, 0xff)},
		{"a page of noise", overwrite(5, 0x5a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			path := filepath.Join(d, "minikubelet-apiserver.db")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard, DataDir: d})
			if err == nil {
				srv.Close()
				t.Fatalf("New() on a damaged database = nil error, want one wrapping ErrCorruptData")
			}
			if !errors.Is(err, fakeapiserver.ErrCorruptData) {
				t.Errorf("New() = %v, want an error wrapping ErrCorruptData", err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
				t.Errorf("New() error = %q, want one line naming %s", msg, path)
			}
		})
	}
}
