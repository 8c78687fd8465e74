//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// child starts this test binary as a child process in mode (see TestMain) with args, and returns
// it with its stdout.
func child(t *testing.T, ctx context.Context, mode string, args ...string) (*exec.Cmd, *bufio.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMain+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The tests wait for the child themselves; one that failed first leaves it to the context's
	// kill, and its standard error is complete only once Wait returned.
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		checkChildRace(t, strings.TrimSpace("minikubelet ("+mode+") "+strings.Join(args, " ")), stderr.String())
	})
	return cmd, bufio.NewReader(stdout), &stderr
}

func readLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, want) {
		t.Fatalf("child wrote %q, %v, want a line starting with %q", line, err, want)
	}
}

// TestSecondSignalExitsAtOnce checks the shutdown contract of every subcommand: the first
// SIGTERM cancels the context, and a second one ends the process even if the command is stuck.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	cmd, out, stderr := child(t, ctx, "signals")
	readLine(t, out, "ready")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	readLine(t, out, "stopping")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("child after two SIGTERMs: %v (stderr %q), want it ended by the signal", err, stderr)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("child after two SIGTERMs: %v, want it ended by SIGTERM", err)
	}
}

// TestReplayStopsOnSignal replays a scenario of a million virtual hours and interrupts it once
// its trace has begun: replay must stop promptly with a non-zero exit code and say where it was.
func TestReplayStopsOnSignal(t *testing.T) {
	file := writeFile(t, t.TempDir(), "long.yaml", strings.Replace(passingScenario, "at: 5s", "at: 1000000h", 1))
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	cmd, out, stderr := child(t, ctx, "main", "replay", "--max-duration", "1000000h", file)
	readLine(t, out, "")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, out)
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("replay did not stop within %v of SIGINT", waitTimeout)
	}
	if exitCode := cmd.ProcessState.ExitCode(); exitCode != 1 {
		t.Errorf("replay after SIGINT: %v, want exit code 1", err)
	}
	if got := stderr.String(); !strings.Contains(got, "replay "+file+": stopped at ") || !strings.Contains(got, "context canceled") {
		t.Errorf("replay after SIGINT wrote %q to stderr, want where it stopped and why", got)
	}
}
