package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// waitTimeout bounds every wait for the trace. The pipeline needs a few seconds on the real
// clock (the default runtime latencies and the PLEG's 1s relist), and up to about ten under the
// race detector; the bound is ten times that, so that a loaded machine does not make the tests
// flaky. It is a deadline, never a sleep: a passing test never waits it out.
const waitTimeout = 2 * time.Minute

const testNode = "node1"

// podYAML is a one-container pod manifest; uid pins metadata.uid when it is not empty.
func podYAML(name, uid, image string) string {
	meta := "  name: " + name + "\n"
	if uid != "" {
		meta += "  uid: " + uid + "\n"
	}
	return "apiVersion: v1\nkind: Pod\nmetadata:\n" + meta +
		"spec:\n  containers:\n  - name: main\n    image: " + image + "\n"
}

// writeManifest replaces dir/name atomically, as configuration management tools do, so that the
// watch never sees a half-written file. The temporary file starts with a dot, which the file
// source ignores.
func writeManifest(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// runInBackground starts run and returns a function that cancels it and returns its error.
func runInBackground(t *testing.T, cfg *runConfig, out *traceLog) (stop func() error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := run(ctx, cfg, out)
		// A run that returns early, on an error, ends the test's waits for its events.
		out.end(err)
		done <- err
	}()
	stopped := false
	stop = func() error {
		stopped = true
		cancel()
		timer := time.NewTimer(waitTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			return err
		case <-timer.C:
			return fmt.Errorf("run did not return within %v of its context ending", waitTimeout)
		}
	}
	t.Cleanup(func() {
		if !stopped {
			if err := stop(); err != nil {
				t.Errorf("run() = %v, want nil", err)
			}
		}
	})
	return stop
}

func testConfig(dir string, standalone bool) *runConfig {
	kc := config.Default()
	kc.Sources.StaticPodPath = dir
	// An hour between relists: every change the tests see within their deadline came from the
	// fsnotify watch.
	kc.Sources.FileCheckFrequency = time.Hour
	return &runConfig{
		NodeName:      testNode,
		Kubelet:       *kc,
		TraceFormat:   trace.JSON,
		APIServerAddr: "127.0.0.1:0",
		Standalone:    standalone,
	}
}

// removal is a pod PodConfig told the sync loop to forget.
type removal struct{ Pod, UID string }

func TestRunFollowsManifestDirectory(t *testing.T) {
	for _, tc := range []struct {
		name       string
		standalone bool
	}{
		{"standalone", true},
		{"embedded-apiserver", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeManifest(t, dir, "a.yaml", podYAML("a", "", "busybox:1.36"))
			writeManifest(t, dir, "b.yaml", podYAML("b", "b-pinned-uid", "busybox:1.36"))
			podA, podB := "default/a-"+testNode, "default/b-"+testNode

			log := newTraceLog()
			stop := runInBackground(t, testConfig(dir, tc.standalone), log)
			ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
			defer cancel()

			// Every valid manifest is added, and the pods start.
			for _, pod := range []string{podA, podB} {
				log.mustWait(t, ctx, 0, "file ADD of "+pod, func(e traceEvent) bool {
					return isUpdate("ADD", "file")(e) && e.carries(pod)
				})
			}
			at, running := log.mustWait(t, ctx, 0, "Running status of "+podA, func(e traceEvent) bool { return isRunning(e, podA) })
			oldUID := running.UID

			// An edit of a manifest without a UID changes the generated UID: the old pod is
			// removed and a new one added.
			writeManifest(t, dir, "a.yaml", podYAML("a", "", "busybox:1.37"))
			at, _ = log.mustWait(t, ctx, at, "file REMOVE of "+podA, func(e traceEvent) bool {
				return isUpdate("REMOVE", "file")(e) && e.carries(podA) && e.UID == oldUID
			})
			_, added := log.mustWait(t, ctx, at, "file ADD of the edited "+podA, func(e traceEvent) bool {
				return isUpdate("ADD", "file")(e) && e.carries(podA)
			})
			if added.UID == oldUID || added.UID == "" {
				t.Errorf("UID of %s after the edit = %q, want a new one (was %q)", podA, added.UID, oldUID)
			}

			// An edit of a manifest that pins metadata.uid keeps the pod: an UPDATE.
			writeManifest(t, dir, "b.yaml", podYAML("b", "b-pinned-uid", "busybox:1.37"))
			at, _ = log.mustWait(t, ctx, at, "file UPDATE of "+podB, func(e traceEvent) bool {
				return isUpdate("UPDATE", "file")(e) && e.carries(podB) && e.UID == "b-pinned-uid"
			})

			// A broken manifest is reported, naming the file; the other pods stay.
			writeManifest(t, dir, "c.yaml", "this: is: not a pod\n")
			at, _ = log.mustWait(t, ctx, at, "error naming c.yaml", func(e traceEvent) bool {
				return e.Component == "sources" && e.Event == "error" && e.Source == "file" &&
					strings.Contains(e.Message, filepath.Join(dir, "c.yaml"))
			})

			// Deleting a manifest removes its pod through the watch, long before a relist.
			if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
				t.Fatal(err)
			}
			_, removed := log.mustWait(t, ctx, at, "file REMOVE of "+podB, func(e traceEvent) bool {
				return isUpdate("REMOVE", "file")(e) && e.carries(podB)
			})
			if removed.UID != "b-pinned-uid" {
				t.Errorf("REMOVE of %s has UID %q, want b-pinned-uid", podB, removed.UID)
			}

			if err := stop(); err != nil {
				t.Errorf("run() = %v, want nil", err)
			}

			events, bad, _ := log.snapshot()
			if len(bad) > 0 {
				t.Errorf("trace lines that are not JSON events: %q", bad)
			}
			var got []removal
			for _, e := range events {
				if e.Component == "podconfig" && e.Event == "update" && (e.Op == "REMOVE" || e.Op == "DELETE") {
					for _, p := range e.Pods {
						got = append(got, removal{Pod: p, UID: e.UID})
					}
				}
			}
			want := []removal{{podA, oldUID}, {podB, "b-pinned-uid"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pods removed by PodConfig (-want +got):\n%s", diff)
			}
		})
	}
}

// kubectl runs kubectl with its own home and cache, so that nothing of the user's is read.
func kubectl(t *testing.T, ctx context.Context, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	args = append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECTL_KUBERC=false")
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func TestRunServesKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	t.Parallel()
	dir := t.TempDir()
	writeManifest(t, dir, "a.yaml", podYAML("a", "", "busybox:1.36"))
	podA := "default/a-" + testNode
	cfg := testConfig(dir, false)
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	// kubectl needs the token and the certificate authority the kubeconfig carries.

	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()

	// The kubeconfig is written before the kubelet starts, so once the mirror pod is in the
	// trace kubectl can see it.
	log.mustWait(t, ctx, 0, "mirror pod creation of "+podA, func(e traceEvent) bool {
		return e.Component == "mirror" && e.Event == "create" && e.Pod == podA && e.Reason == ""
	})
	var list v1.PodList
	if err := json.Unmarshal([]byte(kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "pods", "-A", "-o", "json")), &list); err != nil {
		t.Fatalf("decode kubectl get pods -A -o json: %v", err)
	}
	var mirrors []string
	for _, p := range list.Items {
		if _, ok := p.Annotations[kubecontainer.ConfigMirrorAnnotationKey]; ok {
			mirrors = append(mirrors, p.Namespace+"/"+p.Name)
		}
	}
	if diff := cmp.Diff([]string{podA}, mirrors); diff != "" {
		t.Errorf("mirror pods listed by kubectl get pods -A (-want +got):\n%s", diff)
	}

	// A pod bound to the node through the API reaches the kubelet through the api source.
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: from-kubectl
  namespace: default
spec:
  nodeName: ` + testNode + `
  containers:
  - name: main
    image: busybox:1.36
`
	kubectl(t, ctx, cfg.WriteKubeconfig, manifest, "apply", "-f", "-")
	log.mustWait(t, ctx, 0, "api ADD of default/from-kubectl", func(e traceEvent) bool {
		return isUpdate("ADD", "api")(e) && e.carries("default/from-kubectl")
	})
	log.mustWait(t, ctx, 0, "Running status of default/from-kubectl", func(e traceEvent) bool {
		return isRunning(e, "default/from-kubectl")
	})

	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
}

func TestRunReportsStartupFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		edit func(*runConfig)
		want string
	}{
		{"address-in-use", func(c *runConfig) { c.APIServerAddr = busy.Addr().String() }, "start embedded API server on " + busy.Addr().String()},
		{"missing-kubeconfig", func(c *runConfig) { c.Kubeconfig = filepath.Join(t.TempDir(), "missing") }, "kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t.TempDir(), false)
			tc.edit(cfg)
			_, ctx := ktesting.NewTestContext(t)
			err := run(ctx, cfg, newTraceLog())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestRunFallsBackFromTheDefaultAddress checks that the default address, when taken, gives way to
// a free port, announced with a kubectl line, while an address the user chose does not
// (TestRunReportsStartupFailures).
func TestRunFallsBackFromTheDefaultAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	cfg := testConfig(dir, false)
	cfg.APIServerAddr, cfg.APIServerFallback = busy.Addr().String(), true
	cfg.WriteKubeconfig = filepath.Join(dir, "sub", "kubeconfig")
	var announce syncBuffer
	cfg.Announce = &announce
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	// The kubeconfig is written and announced before the kubelet starts.
	log.mustWait(t, ctx, 0, "node registration", func(e traceEvent) bool { return e.Component == "node" && e.Event == "register" })
	if err := stop(); err != nil {
		t.Fatalf("run() = %v", err)
	}
	kc, err := clientcmd.LoadFromFile(cfg.WriteKubeconfig)
	if err != nil {
		t.Fatalf("load the kubeconfig: %v", err)
	}
	if server := kc.Clusters["minikubelet"].Server; !strings.HasPrefix(server, "https://127.0.0.1:") || strings.HasSuffix(server, busy.Addr().String()) {
		t.Errorf("kubeconfig server = %q, want a free port on 127.0.0.1 other than %s", server, busy.Addr())
	}
	got := announce.String()
	if !strings.Contains(got, "  kubectl --kubeconfig "+cfg.WriteKubeconfig+" get pods -A -w\n") || strings.Contains(got, busy.Addr().String()) {
		t.Errorf("announcement = %q, want a kubectl line for %s on another port than %s", got, cfg.WriteKubeconfig, busy.Addr())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader on different goroutines.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveAPIServer serves a fake API server of its own over TLS with a bearer token, as
// `minikubelet apiserver` does, until the test's cleanup, and returns it with the path of a
// kubeconfig that reaches it.
func serveAPIServer(t *testing.T) (*fakeapiserver.Server, string) {
	t.Helper()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, BearerToken: "t0ken"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := fakeapiserver.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, ca, err := fakeapiserver.SelfSignedTLS(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, tls.NewListener(l, tlsConfig)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve() = %v, want nil", err)
		}
	})
	kubeconfig := filepath.Join(t.TempDir(), "kubelet.conf")
	if err := writeKubeconfig(kubeconfig, serving{url: "https://" + l.Addr().String(), token: "t0ken", caData: ca}); err != nil {
		t.Fatal(err)
	}
	return srv, kubeconfig
}

func TestRunUsesKubeconfig(t *testing.T) {
	t.Parallel()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	// An API server of its own, as `minikubelet apiserver` runs one for several nodes.
	srv, kubeconfig := serveAPIServer(t)
	dir := t.TempDir()
	writeManifest(t, dir, "a.yaml", podYAML("a", "", "busybox:1.36"))
	// The command line of a kubeadm node: the systemd drop-in's flags, kubeadm-flags.env's and a
	// KubeletConfiguration file. What minikubelet does not simulate is accepted.
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"staticPodPath: "+dir+"\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\nrotateCertificates: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, warn, err := resolveWarnings(t, "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig="+kubeconfig,
		"--config="+config, "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
		"--pod-infra-container-image=registry.k8s.io/pause:3.10", "--node-ip=127.0.0.1", "--node-labels=zone=a",
		"--hostname-override="+testNode, "--max-pods=50", "--trace-format=json", "--port=0", "--root-dir="+t.TempDir())
	if err != nil {
		t.Fatalf("resolve() error = %v", err)
	}
	if !strings.Contains(warn, "accepted, not simulated: --bootstrap-kubeconfig=") {
		t.Errorf("warnings = %q, want the accepted kubelet flags reported", warn)
	}

	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	podA := "default/a-" + testNode
	log.mustWait(t, ctx, 0, "mirror pod creation of "+podA, func(e traceEvent) bool {
		return e.Component == "mirror" && e.Event == "create" && e.Pod == podA && e.Reason == ""
	})
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
	pods, _ := srv.NodePods(testNode)
	var names []string
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if diff := cmp.Diff([]string{podA}, names); diff != "" {
		t.Errorf("pods on %s in the external API server (-want +got):\n%s", testNode, diff)
	}
	// The embedded server was not started: the trace has no apiserver events.
	events, _, _ := log.snapshot()
	for _, e := range events {
		if e.Component == "apiserver" {
			t.Errorf("trace has an event of the embedded API server with --kubeconfig: %v", e)
			break
		}
	}
}
