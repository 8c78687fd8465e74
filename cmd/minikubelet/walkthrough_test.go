package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lineLog collects the lines a process writes and wakes whoever waits for one.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newLineLog(r io.Reader) *lineLog {
	l := &lineLog{changed: make(chan struct{})}
	go func() {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, s.Text())
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
	}()
	return l
}

// wait returns the first line that matches re, waiting for it until ctx ends.
func (l *lineLog) wait(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	for {
		l.mu.Lock()
		lines, changed := l.lines, l.changed
		l.mu.Unlock()
		for _, line := range lines {
			if m := re.FindStringSubmatch(line); m != nil {
				return m, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (l *lineLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestNewUserWalkthrough follows the README as a new user would: build the binary, run it on
// the bundled manifests, wait for Running pods, point kubectl at the node with the line the
// start-up screen prints, delete a mirror pod with kubectl's default --wait, stop the simulator
// with SIGTERM, and replay a scenario. Along the way it checks the kubelet conventions a user
// meets: the JSON log format on standard error, the text trace within 120 columns.
func TestNewUserWalkthrough(t *testing.T) {
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
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 6*waitTimeout)
	defer cancel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	// The README's first command, built into a temporary directory.
	bin := filepath.Join(t.TempDir(), "minikubelet")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/minikubelet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "minikubelet ") {
		t.Errorf("minikubelet version = %q, %v", out, err)
	}

	// --port 0 and the environment keep the test off the user's kubelet port and directories.
	run := exec.Command(bin, "run", "--pod-manifest-path", "manifests", "--hostname-override", "node-1",
		"--port", "0", "-v", "2", "--logging-format", "json")
	run.Dir = root
	run.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := run.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	traceLines, logLines := newLineLog(stdout), newLineLog(stderr)
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	reaped := false
	defer func() {
		if !reaped {
			run.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("standard error:\n%s", strings.Join(logLines.all(), "\n"))
			var web []string
			for _, line := range traceLines.all() {
				if strings.Contains(line, "web-node-1") && !strings.Contains(line, " events ") {
					web = append(web, line)
				}
			}
			t.Logf("the trace of web-node-1:\n%s", strings.Join(web, "\n"))
		}
	}()

	waitCtx, cancelWait := context.WithTimeout(ctx, 4*waitTimeout)
	defer cancelWait()
	m, err := logLines.wait(waitCtx, regexp.MustCompile(`^  kubectl --kubeconfig (\S+) get pods -A -w$`))
	if err != nil {
		t.Fatalf("no kubectl line on the start-up screen: %v", err)
	}
	kubeconfig := m[1]
	for _, pod := range []string{"web-node-1", "kube-system/etcd-node-1"} {
		re := regexp.MustCompile(`^ *\d+\.\d{3}s status +` + regexp.QuoteMeta(pod) + ` +set from=Pending to=Running `)
		if _, err := traceLines.wait(waitCtx, re); err != nil {
			t.Fatalf("no Running status of %s in the trace: %v", pod, err)
		}
	}

	kubectl := func(args ...string) string {
		t.Helper()
		home := t.TempDir()
		cmd := exec.CommandContext(waitCtx, "kubectl", append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECTL_KUBERC=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			// The trace's last lines say what the kubelet was doing meanwhile.
			lines := traceLines.all()
			lines = lines[max(0, len(lines)-40):]
			t.Fatalf("kubectl %s: %v\n%s\nthe trace's last lines:\n%s", strings.Join(args, " "), err, out, strings.Join(lines, "\n"))
		}
		return string(out)
	}
	// The trace's Running is the status manager's cache; its write to the API server follows from
	// the status manager's own goroutine, which a loaded machine can hold back: wait for the API
	// server's copy (kubectl wait watches it) before reading the table.
	kubectl("wait", "--for=jsonpath={.status.phase}=Running", "--timeout="+(4*waitTimeout).String(), "pod/web-node-1")
	if out := kubectl("get", "pods", "-A"); !regexp.MustCompile(`(?m)^default +web-node-1 +1/1 +Running `).MatchString(out) {
		t.Errorf("kubectl get pods -A does not show web-node-1 Running:\n%s", out)
	}
	start := time.Now()
	// kubectl waits for the deletion (its default --wait); it takes under a second on a quiet
	// machine, and its own timeout makes a hang fail with the trace rather than the package's.
	kubectl("delete", "pod", "web-node-1", "--timeout="+waitTimeout.String())
	t.Logf("kubectl delete pod web-node-1 returned after %v", time.Since(start))
	// The kubelet creates the mirror pod again.
	if _, err := traceLines.wait(waitCtx, regexp.MustCompile(`^ *\d+\.\d{3}s mirror +web-node-1 +reconcile reason=MirrorPodMissing `)); err != nil {
		t.Errorf("the mirror pod was not created again: %v", err)
	}

	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		reaped = true
		if err != nil {
			t.Errorf("minikubelet run after SIGTERM: %v, want exit code 0", err)
		}
	case <-waitCtx.Done():
		t.Fatal("minikubelet run did not exit after SIGTERM")
	}
	for _, line := range traceLines.all() {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("trace line of %d columns, want at most 120: %q", n, line)
			break
		}
	}
	jsonLogs := 0
	for _, line := range logLines.all() {
		var entry struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg != "" {
			jsonLogs++
		}
	}
	if jsonLogs == 0 {
		t.Errorf("no JSON log line on standard error with --logging-format json")
	}

	replay := exec.CommandContext(ctx, bin, "replay", "scenarios/static-pod-lifecycle.yaml")
	replay.Dir = root
	out, err := replay.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "expectations:") {
		t.Errorf("minikubelet replay scenarios/static-pod-lifecycle.yaml = %v\n%s", err, out)
	}
}
