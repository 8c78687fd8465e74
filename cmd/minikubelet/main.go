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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	root.AddCommand(newRunCommand(), newReplayCommand(), newAPIServerCommand())
	return root
}
