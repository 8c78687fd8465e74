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
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json, as the kubelet has it
	"k8s.io/klog/v2"
)

// The exit codes of every command (README, "Exit codes").
const (
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // the command line or an input file is wrong: nothing ran
)

// exitError carries a process exit code other than 1 out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// applyLogging validates the logging flags and applies them. Only main applies them: klog's
// configuration is the process's and can be applied once, and tests run many commands in one
// process.
var applyLogging = func(c *logsapi.LoggingConfiguration) error {
	return logsapi.Validate(c, nil, nil).ToAggregate()
}

func main() {
	applyLogging = func(c *logsapi.LoggingConfiguration) error {
		// Standard output carries the trace; the JSON format's info stream, standard output
		// for the kubelet, goes to standard error here.
		return logsapi.ValidateAndApplyWithOptions(c, &logsapi.LoggingOptions{ErrorStream: os.Stderr, InfoStream: os.Stderr}, nil)
	}
	ctx, stop := signalContext(context.Background())
	ctx = klog.NewContext(ctx, klog.Background())
	root := newRootCommand()
	err := root.ExecuteContext(ctx)
	stop()
	logs.FlushLogs()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "minikubelet:", err)
	os.Exit(exitCodeOf(err))
}

// exitCodeOf maps a command's error to the exit code: exitUsage for a usage error (a bad flag,
// argument or command, which cobra reports as plain errors, or an exitError saying so),
// exitFailure otherwise.
func exitCodeOf(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case strings.HasPrefix(err.Error(), "unknown command "):
		return exitUsage
	}
	return exitFailure
}

// usageErrors makes the flag and argument errors of cmd and its subcommands exit with
// exitUsage.
func usageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: exitUsage, err: err} })
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageErrors(sub)
	}
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
		Example: `  minikubelet run --pod-manifest-path manifests --hostname-override node-1
  minikubelet replay scenarios/static-pod-lifecycle.yaml
  minikubelet run -v 4 --logging-format json --pod-manifest-path manifests
  minikubelet version`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	// The kubelet's logging flags (-v, --vmodule, --logging-format, ...), registered and applied
	// as the kubelet does it, for every command.
	logCfg := logsapi.NewLoggingConfiguration()
	logsapi.AddFlags(logCfg, root.PersistentFlags())
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := applyLogging(logCfg); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("logging flags: %w", err)}
		}
		return nil
	}
	root.AddCommand(newRunCommand(), newReplayCommand(), newAPIServerCommand(), newPluginCommand(), newVersionCommand(),
		newExplainCommand(), newLearnCommand())
	usageErrors(root)
	return root
}
