package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// process is minikubelet run by the test binary itself (TestMain's asMain), in the background.
type process struct {
	cmd    *exec.Cmd
	name   string
	stderr *strings.Builder
	// done is closed once the process exited; err is then Wait's answer. A closed channel, not
	// a value sent once, so that any number of waiters (a wait for a file, the cleanup's kill)
	// see the exit: a cleanup waiting for a value an earlier waiter took would hang.
	done chan struct{}
	err  error
}

// startProcess starts `minikubelet args...` and, when tb ends, kills it and fails tb on a data race
// the process reported.
func startProcess(tb testing.TB, args ...string) *process {
	tb.Helper()
	p := &process{cmd: exec.Command(os.Args[0], args...), name: "minikubelet " + strings.Join(args, " "),
		stderr: &strings.Builder{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), asMain+"=main", "XDG_STATE_HOME="+tb.TempDir(), "XDG_CACHE_HOME="+tb.TempDir())
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		p.kill()
		checkChildRace(tb, p.name, p.stderr.String())
		if tb.Failed() {
			tb.Logf("%s stderr:\n%s", p.name, p.stderr.String())
		}
	})
	return p
}

// kill stops the process as a crash or an evicted pod would, with no chance to clean up, and
// waits until it exited. It waits on done, not cmd.ProcessState, which the goroutine in Wait
// writes: a process that exited by itself is killed in vain, harmlessly.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitError is the process's exit, with its standard error, once done is closed.
func (p *process) exitError() error {
	err := p.err
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited: %w\n%s", p.name, err, p.stderr.String())
}

// untilExit is ctx ended, with the process's exit as its cause (context.Cause), once the process
// exits: a wait on what the process serves then fails with why rather than at its deadline.
func (p *process) untilExit(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-p.done:
			cancel(p.exitError())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// startAPIServer starts `minikubelet apiserver` on addr, writing its kubeconfig into dir, and
// waits until it wrote it. It fails, rather than waits on, an API server that exits first, and
// gives up when ctx ends; the process is returned either way once started. tb's end kills it.
func startAPIServer(tb testing.TB, ctx context.Context, dir, addr string) (*process, string, error) {
	tb.Helper()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	p := startProcess(tb, "apiserver", "--addr", addr, "--write-kubeconfig", kubeconfig)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			return p, kubeconfig, nil
		}
		select {
		case <-p.done:
			// It may have written the file as it exited; it serves nothing either way.
			return p, "", fmt.Errorf("the API server wrote no kubeconfig: %w", p.exitError())
		case <-ctx.Done():
			return p, "", fmt.Errorf("the API server wrote no kubeconfig: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestStartAPIServerExitsEarly checks that an API server that exits before it wrote its kubeconfig
// fails the wait with its exit and standard error at once, and that killing it then returns:
// BenchmarkNodeHeap took the exit from a channel its cleanup's kill waited on too, and hung.
func TestStartAPIServerExitsEarly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	p, _, err := startAPIServer(t, ctx, t.TempDir(), "not an address")
	if err == nil {
		t.Fatal("startAPIServer() = nil, want the API server's exit")
	}
	if ctx.Err() != nil {
		t.Fatalf("startAPIServer() = %v, at the deadline; want it as the API server exited", err)
	}
	if !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("startAPIServer() = %v, want the API server's exit status 1", err)
	}
	killed := make(chan struct{})
	go func() {
		p.kill()
		close(killed)
	}()
	select {
	case <-killed:
	case <-ctx.Done():
		t.Fatal("killing an API server that exited early did not return")
	}
}

// TestUntilExit checks that the context untilExit returns ends once the process exits, with the
// exit as its cause, and that the process's cleanup returns after that.
func TestUntilExit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitTimeout)
	defer cancel()
	p, _, err := startAPIServer(t, ctx, t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	running, stop := p.untilExit(ctx)
	defer stop()
	if err := running.Err(); err != nil {
		t.Fatalf("the context of a running API server ended: %v", err)
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-running.Done():
	case <-ctx.Done():
		t.Fatal("the context did not end as the API server exited")
	}
	if cause := context.Cause(running); cause == nil || !strings.Contains(cause.Error(), "signal: killed") {
		t.Errorf("the context's cause is %v, want the API server's exit", cause)
	}
}
