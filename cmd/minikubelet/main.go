// Command minikubelet simulates the kubelet's pod-config and pod-sync machinery.
//
// main only wires: it parses flags into a config struct, builds a signal context and a logger, and
// calls one function per subcommand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// exitError carries a process exit code other than 1 out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	klog.InitFlags(nil)
	ctx, stop := signalContext(context.Background())
	ctx = klog.NewContext(ctx, klog.Background())
	root := newRootCommand()
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "minikubelet:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	os.Exit(1)
}

// signalContext returns a context that the first SIGINT or SIGTERM cancels, for every
// subcommand to stop on. The signals get their default action back before the context is
// cancelled, so that a second one ends the process at once if the first did not stop it. stop
// cancels the context and releases the signals.
func signalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	released := make(chan struct{})
	go func() {
		defer close(released)
		select {
		case <-sigs:
		case <-ctx.Done():
		}
		signal.Stop(sigs)
		cancel()
	}()
	return ctx, func() {
		cancel()
		<-released
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "minikubelet",
		Short: "Simulate the kubelet's pod-config and pod-sync machinery",
		Long: `minikubelet runs the kubelet's pod pipeline (file, HTTP and API sources, PodConfig,
the sync loop, pod workers, a fake container runtime and the PLEG) and prints every step
as a trace, either live ("run") or replayed from a scenario on a virtual clock ("replay").`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newReplayCommand(), newAPIServerCommand(), newPluginCommand(),
		newExplainCommand(), newLearnCommand())
	return root
}
