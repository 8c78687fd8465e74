package kubelet

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/world"
	"github.com/minikubelet/minikubelet/test/pipenet"
)

// heldMirrorAPI is the API server's mirror pod calls, except that every create of the pod named
// hold waits until release is closed (or its context ends), as a request to a slow API server.
type heldMirrorAPI struct {
	podmanager.MirrorAPI
	hold    string
	release chan struct{}

	mu      sync.Mutex
	waiting int // creates of hold that started waiting
}

func (m *heldMirrorAPI) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if pod.Name == m.hold {
		m.mu.Lock()
		m.waiting++
		m.mu.Unlock()
		select {
		case <-m.release:
		case <-ctx.Done():
			return &v1.Pod{}, ctx.Err()
		}
	}
	return m.MirrorAPI.CreatePod(ctx, pod)
}

func (m *heldMirrorAPI) started() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting
}

// lockedManifests is the manifest server, answered under a lock so that the test can change its
// answer while the http source asks.
type lockedManifests struct {
	mu sync.Mutex
	m  *world.Manifests
}

func (l *lockedManifests) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.RoundTrip(r)
}

func (l *lockedManifests) serve(status int, body string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.Serve(status, body)
}

// twoStaticPods is the manifest server's answer: two static pods of one container each.
const twoStaticPods = `apiVersion: v1
kind: PodList
items:
- metadata: {name: slow, namespace: default}
  spec:
    containers: [{name: c, image: registry.k8s.io/pause:3.10}]
- metadata: {name: fast, namespace: default}
  spec:
    containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`

// slowStaticPod is the manifest server's answer with the first of twoStaticPods only.
const slowStaticPod = `apiVersion: v1
kind: PodList
items:
- metadata: {name: slow, namespace: default}
  spec:
    containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`

// TestRunMirrorCallsBlockOnlyTheirPod runs a kubelet with an API server in a bubble, with two
// static pods, one of whose mirror pod creates hang: the other pod reaches Running meanwhile, as
// in the kubelet, whose pod workers block in their own API calls and whose
// fastStaticPodsRegistration has a goroutine of its own. A held pod whose first sync makes the
// create stays Pending until the create returns, then goes on to Running with its mirror pod.
func TestRunMirrorCallsBlockOnlyTheirPod(t *testing.T) {
	for _, tc := range []struct {
		name string
		// first is what the manifest server answers from the start (404 when empty); both
		// pods come 5s in.
		first string
		// wantHeld is the held pod's phase while its create hangs.
		wantHeld v1.PodPhase
	}{
		// The pods come once the node is registered and its informer has synced, so that the
		// held pod's first sync creates its mirror pod.
		{name: "first sync", wantHeld: v1.PodPending},
		// The held pod comes before the node is registered: its first sync finds no node and
		// starts it, and fastStaticPodsRegistration makes the create that hangs.
		{name: "fastStaticPodsRegistration", first: slowStaticPod, wantHeld: v1.PodRunning},
	} {
		t.Run(tc.name, func(t *testing.T) { mirrorCallsBlockOnlyTheirPod(t, tc.first, tc.wantHeld) })
	}
}

func mirrorCallsBlockOnlyTheirPod(t *testing.T, first string, wantHeld v1.PodPhase) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		// Watches need a server that streams: Serve on a pipe listener.
		l := pipenet.New()
		srvCtx, stopServer := context.WithCancel(t.Context())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(srvCtx, l) }()
		client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Dial: l.Dial, QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		manifests := &lockedManifests{m: world.NewManifests()}
		if first != "" {
			manifests.serve(http.StatusOK, first)
		}
		cfg := config.Default()
		cfg.Sources.StaticPodURL = manifestURL
		held := &heldMirrorAPI{MirrorAPI: podmanager.ClientsetMirrorAPI{Client: client}, hold: "slow-" + testNode, release: make(chan struct{})}
		k, err := New(Options{NodeName: testNode, NodeIP: "192.168.0.10", Config: cfg, Clock: clock.RealClock{}, Tracer: trace.Discard,
			World: World{API: client, ManifestClient: &http.Client{Transport: manifests}, Writes: &Writes{Mirror: held}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- k.Run(ctx, RunOptions{Snapshots: true}) }()

		time.Sleep(5 * time.Second)
		synctest.Wait()
		manifests.serve(http.StatusOK, twoStaticPods)
		time.Sleep(time.Minute) // the http source's next look, 20s apart, and the pods' start
		synctest.Wait()
		phases := podPhases(k)
		if held.started() == 0 {
			t.Fatalf("no mirror pod create of %s started; phases %v", held.hold, phases)
		}
		if got := phases["fast-"+testNode]; got != v1.PodRunning {
			t.Errorf("while the create of %s hangs, fast's phase = %q, want Running", held.hold, got)
		}
		if got := phases[held.hold]; got != wantHeld {
			t.Errorf("while its mirror pod create hangs, %s's phase = %q, want %q", held.hold, got, wantHeld)
		}

		close(held.release)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := podPhases(k)[held.hold]; got != v1.PodRunning {
			t.Errorf("once its create returned, %s's phase = %q, want Running", held.hold, got)
		}
		if _, err := client.CoreV1().Pods("default").Get(t.Context(), held.hold, metav1.GetOptions{}); err != nil {
			t.Errorf("mirror pod of %s: %v", held.hold, err)
		}

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
		stopServer()
		if err := <-served; err != nil {
			t.Errorf("Serve() = %v", err)
		}
	})
}

// podPhases are the status manager's phases by pod name, from a snapshot of the running kubelet.
func podPhases(k *Kubelet) map[string]v1.PodPhase {
	out := map[string]v1.PodPhase{}
	for _, p := range k.Board.Get(context.Background(), time.Now()).Pods {
		if p.HasStatus {
			out[p.Pod.Name] = p.Status.Phase
		}
	}
	return out
}
