package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/yaml"
)

// bundledManifests is the example static pod directory, relative to this package.
const bundledManifests = "../../manifests"

// bundledPods returns "namespace/name-node" of every pod in the bundled manifests, as the file
// source names them on node.
func bundledPods(t *testing.T, node string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(bundledManifests, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("Glob(%s/*.yaml) = %v, %v, want manifests", bundledManifests, paths, err)
	}
	var pods []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ns := m.Metadata.Namespace
		if ns == "" {
			ns = "default"
		}
		pods = append(pods, ns+"/"+m.Metadata.Name+"-"+node)
	}
	return pods
}

// builtWithoutRace is why the tests that build minikubelet and run it skip under -race: the
// binary they build has no race detector in it, and all the test's own goroutines do is read its
// output, so there is nothing for the detector to find; the plain suite runs them.
const builtWithoutRace = "the binary it builds runs without the race detector"

// TestBinaryRunsBundledManifests builds minikubelet, runs it on the bundled manifests with the
// embedded API server, waits until every pod runs, and stops it with SIGTERM as an init system
// would.
func TestBinaryRunsBundledManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if raceEnabled {
		t.Skip(builtWithoutRace)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitTimeout)
	defer cancel()

	bin := filepath.Join(t.TempDir(), "minikubelet")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	const node = "e2e-node"
	pods := bundledPods(t, node)
	log := newTraceLog()
	var stderr strings.Builder
	cmd := exec.Command(bin, "run", "--pod-manifest-path", bundledManifests, "--trace-format", "json",
		"--hostname-override", node, "--port", "0")
	cmd.Stdout, cmd.Stderr = log, &stderr
	// The default --root-dir is under the user's state directory and the default kubeconfig in
	// its cache directory: keep both inside the test.
	cache := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+cache)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	reaped := false
	defer func() {
		if !reaped {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("minikubelet stderr:\n%s", stderr.String())
		}
	}()

	waitCtx, cancelWait := context.WithTimeout(ctx, waitTimeout)
	defer cancelWait()
	if err := log.waitForAll(waitCtx, 0, "file ADD", pods, func(e traceEvent, pod string) bool {
		return isUpdate("ADD", "file")(e) && e.carries(pod)
	}); err != nil {
		t.Fatal(err)
	}
	if err := log.waitForAll(waitCtx, 0, "Running status", pods, isRunning); err != nil {
		t.Fatal(err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopCtx, cancelStop := context.WithTimeout(ctx, waitTimeout)
	defer cancelStop()
	select {
	case err := <-exited:
		reaped = true
		if err != nil {
			t.Errorf("minikubelet run after SIGTERM: %v, want exit code 0", err)
		}
	case <-stopCtx.Done():
		t.Fatalf("minikubelet did not exit within %v of SIGTERM", waitTimeout)
	}
	if _, bad, _ := log.snapshot(); len(bad) > 0 {
		t.Errorf("trace lines that are not JSON events: %q", bad)
	}
	// The start-up screen says how to point kubectl at the node.
	if want := "  kubectl --kubeconfig " + filepath.Join(cache, "minikubelet", "kubeconfig") + " get pods -A -w\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("minikubelet run's standard error lacks the kubectl line %q", want)
	}
}
