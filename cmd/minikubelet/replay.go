package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/scenario"
	"github.com/minikubelet/minikubelet/trace"
)

// replayConfig is the configuration of `minikubelet replay`.
type replayConfig struct {
	Files       []string
	TraceFormat trace.Format
	Until       time.Duration // 0 = play every step
	Golden      string
	// MaxDuration bounds the scenarios' durations (scenario.LoadOptions); 0 = the default.
	MaxDuration time.Duration
}

func newReplayCommand() *cobra.Command {
	var format string
	var cfg replayConfig
	cmd := &cobra.Command{
		Use:   "replay FILE...",
		Short: "Replay scenario files on a virtual clock and check their expectations",
		Long: `replay runs the real minikubelet components on a virtual clock that jumps from one due
timer to the next, plays each scenario's steps, prints the trace and then a summary of the
expectations. It exits 0 when every expectation is met, 1 when one fails, the trace differs
from --golden or the replay is interrupted (SIGINT, SIGTERM), and 2 when a scenario file is
invalid or --golden cannot be read. A scenario whose steps reach past --max-duration of virtual
time is invalid.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := trace.ParseFormat(format)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--trace-format: %w", err)}
			}
			cfg.TraceFormat, cfg.Files = f, args
			if cfg.MaxDuration <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("--max-duration %v: must be positive", cfg.MaxDuration)}
			}
			if cfg.Golden != "" && len(args) != 1 {
				return &exitError{code: 2, err: errors.New("--golden compares one scenario's trace: give one FILE")}
			}
			return replay(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&format, "trace-format", "text", "trace output: text or json")
	cmd.Flags().DurationVar(&cfg.Until, "until", 0, "stop at this virtual time instead of after the last step")
	cmd.Flags().StringVar(&cfg.Golden, "golden", "", "compare the trace with this file and print the first difference")
	cmd.Flags().DurationVar(&cfg.MaxDuration, "max-duration", scenario.DefaultMaxDuration,
		"refuse scenarios with a step (at), runtimeDown.for or crashLoop.after beyond this virtual time")
	return cmd
}

func replay(ctx context.Context, cfg replayConfig, out io.Writer) error {
	// Every file, the golden one included, is checked before anything runs, so one typo does not
	// waste a long replay.
	var scenarios []*scenario.Scenario
	var errs []error
	for _, path := range cfg.Files {
		s, err := scenario.Load(path, scenario.LoadOptions{MaxDuration: cfg.MaxDuration})
		if errors.Is(err, scenario.ErrTooLong) {
			err = fmt.Errorf("%w (--max-duration raises the maximum)", err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		scenarios = append(scenarios, s)
	}
	var golden []byte
	if cfg.Golden != "" {
		var err error
		if golden, err = os.ReadFile(cfg.Golden); err != nil {
			errs = append(errs, fmt.Errorf("--golden: %w", err))
		}
	}
	if len(errs) > 0 {
		return &exitError{code: 2, err: errors.Join(errs...)}
	}
	failed := false
	for _, s := range scenarios {
		// The trace is kept for --golden only: a long replay's trace need not sit in memory.
		var traceBuf bytes.Buffer
		traceOut := out
		if cfg.Golden != "" {
			traceOut = io.MultiWriter(out, &traceBuf)
		}
		res, err := scenario.Run(ctx, s, scenario.RunOptions{
			Out:    traceOut,
			Format: cfg.TraceFormat,
			Until:  cfg.Until,
		})
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		res.WriteSummary(out)
		if !res.Passed() {
			failed = true
		}
		if cfg.Golden != "" {
			if diff := scenario.FirstDifference(golden, traceBuf.Bytes()); diff != "" {
				fmt.Fprintf(out, "trace differs from %s: %s\n", cfg.Golden, diff)
				failed = true
			} else {
				fmt.Fprintf(out, "trace matches %s\n", cfg.Golden)
			}
		}
	}
	if failed {
		return &exitError{code: 1, err: errors.New("replay: expectations failed or the trace differs")}
	}
	return nil
}
