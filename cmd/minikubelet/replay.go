package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/teach"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// replayConfig is the configuration of `minikubelet replay`.
type replayConfig struct {
	Files       []string
	TraceFormat trace.Format
	TraceView   traceView     // what the trace shows; its Format is TraceFormat's
	Until       time.Duration // 0 = play every step
	// Golden is the file the trace is compared with, in either format (GoldenFormat); with
	// UpdateGolden, the file written. "" with UpdateGolden means each scenario's own golden file.
	Golden       string
	UpdateGolden bool
	// MaxDuration bounds the scenarios' durations (replay.LoadOptions); 0 = the default.
	MaxDuration time.Duration
	// HTML is the file the timeline view of the replay is written to; "" for none.
	HTML string
}

func newReplayCommand() *cobra.Command {
	var tf traceFlags
	var cfg replayConfig
	cmd := &cobra.Command{
		Use:   "replay SCENARIO...",
		Short: "Replay scenario files on a virtual clock and check their expectations",
		Long: `replay runs the real minikubelet components on a virtual clock that jumps from one due
timer to the next and plays each scenario's steps. It prints the scenario's name and description,
then the trace with each expectation's verdict at its instant, then a summary. With
--trace-format json every line is a JSON object (JSON Lines): trace events have a "component",
the header, verdicts and summary a "kind".

A SCENARIO is a scenario file, or the name of a scenario built into the binary (minikubelet learn
lists them; scenarios/NAME.yaml names it too when there is no such file), so that replay NAME
works from any directory. --golden likewise takes a file or a built-in golden trace's name
(NAME.golden).

A step that cannot be carried out (a containerExit naming a container the pod does not have, a
removeManifest of a missing file) fails the replay. With --until, the expectations after that time
are listed as not reached.

--golden compares the trace with a golden file, text or JSON Lines (told apart by its content);
--update-golden writes it instead (JSON Lines for a .json or .jsonl file, text otherwise), by
default to the .golden file beside each scenario (a built-in scenario has none: give --golden).

--html writes the replay as one self-contained HTML page: swimlanes per component, pod worker and
container on the virtual time axis, the steps and verdicts, and for each event its fields, the
kubelet function it mirrors and its chain of causes and effects. It opens offline in a browser.

Exit codes: 0 when every expectation is met, 1 when one fails, a step cannot be carried out, the
trace differs from --golden or the replay is interrupted (SIGINT, SIGTERM), 2 for a usage error:
an invalid scenario file (one whose steps reach past --max-duration of virtual time included), an
unreadable --golden, a bad flag.`,
		Example: `  minikubelet replay static-pod-lifecycle
  minikubelet replay scenarios/static-pod-lifecycle.yaml
  minikubelet replay --trace-format json scenarios/crash-loop.yaml | jq -c 'select(.kind)'
  minikubelet replay --until 30s scenarios/mirror-pod-deleted.yaml
  minikubelet replay --golden scenarios/crash-loop.golden scenarios/crash-loop.yaml
  minikubelet replay --update-golden scenarios/*.yaml
  minikubelet replay --html crash-loop.html scenarios/crash-loop.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tv, err := tf.resolve()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			cfg.TraceFormat, cfg.TraceView, cfg.Files = tv.Format, tv, args
			if cfg.MaxDuration <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("--max-duration %v: must be positive", cfg.MaxDuration)}
			}
			if cfg.HTML != "" && len(args) != 1 {
				return &exitError{code: 2, err: errors.New("--html writes one scenario's timeline: give one SCENARIO")}
			}
			if cfg.Golden != "" && len(args) != 1 {
				return &exitError{code: 2, err: errors.New("--golden names one scenario's golden file: give one SCENARIO")}
			}
			return runReplay(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	tf.bind(cmd.Flags())
	cmd.Flags().DurationVar(&cfg.Until, "until", 0, "stop at this virtual time instead of after the last step; later expectations are reported as not reached")
	cmd.Flags().StringVar(&cfg.Golden, "golden", "", "compare the trace with this golden file (text or JSON Lines) and print the first difference")
	cmd.Flags().BoolVar(&cfg.UpdateGolden, "update-golden", false, "write the trace to --golden, or to the .golden file beside each scenario, instead of comparing")
	cmd.Flags().StringVar(&cfg.HTML, "html", "", "write the replay's timeline view to this self-contained HTML file")
	cmd.Flags().DurationVar(&cfg.MaxDuration, "max-duration", replay.DefaultMaxDuration,
		"refuse scenarios with a step (at), runtimeDown.for or crashLoop.after beyond this virtual time")
	return cmd
}

func runReplay(ctx context.Context, cfg replayConfig, out io.Writer) error {
	// Every file, the golden one included, is checked before anything runs, so one typo does not
	// waste a long replay.
	var scenarios []*replay.Scenario
	var errs []error
	for _, path := range cfg.Files {
		s, builtin, err := teach.LoadScenario(path, replay.LoadOptions{MaxDuration: cfg.MaxDuration})
		if errors.Is(err, replay.ErrTooLong) {
			err = fmt.Errorf("%w (--max-duration raises the maximum)", err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if builtin && cfg.UpdateGolden && cfg.Golden == "" {
			errs = append(errs, fmt.Errorf("--update-golden: %s is built in and has no file beside it to write: give --golden", path))
			continue
		}
		scenarios = append(scenarios, s)
	}
	var golden []byte
	if cfg.Golden != "" && !cfg.UpdateGolden {
		var err error
		if golden, err = teach.ReadGolden(cfg.Golden); err != nil {
			errs = append(errs, fmt.Errorf("--golden: %w", err))
		}
	}
	if len(errs) > 0 {
		return &exitError{code: 2, err: errors.Join(errs...)}
	}
	var failures []error
	for i, s := range scenarios {
		if i > 0 && cfg.TraceFormat == trace.Text {
			fmt.Fprintln(out)
		}
		replay.WriteHeader(out, s, cfg.TraceFormat)
		res, err := replay.Run(ctx, s, replay.RunOptions{
			Out:    out,
			Report: out,
			Format: cfg.TraceFormat,
			View:   cfg.TraceView.newView(),
			Text:   cfg.TraceView.Text,
			Until:  cfg.Until,
			// A golden file is compared in its own format, rendered from the kept events.
			KeepEvents: cfg.UpdateGolden || cfg.Golden != "" || cfg.HTML != "",
			PodDiffs:   cfg.HTML != "",
		})
		if err != nil {
			return err
		}
		if cfg.HTML != "" {
			if err := writeHTML(cfg.HTML, s, res); err != nil {
				return err
			}
		}
		check, err := checkGolden(cfg, cfg.Files[i], golden, res)
		if err != nil {
			return err
		}
		if cfg.TraceFormat == trace.Text {
			fmt.Fprintln(out)
		}
		res.WriteSummaryFormat(out, cfg.TraceFormat, check)
		for _, se := range res.StepErrors {
			failures = append(failures, fmt.Errorf("%s: %w", cfg.Files[i], se))
		}
		if n := failedOutcomes(res); n > 0 {
			failures = append(failures, fmt.Errorf("%s: %d expectations failed", cfg.Files[i], n))
		}
		if check != nil && check.Difference != "" {
			failures = append(failures, fmt.Errorf("%s: the trace differs from %s", cfg.Files[i], check.File))
		}
	}
	if len(failures) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("replay failed: %w", errors.Join(failures...))}
	}
	return nil
}

// writeHTML writes the timeline view of a replay to path.
func writeHTML(path string, s *replay.Scenario, res *replay.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := teach.WriteHTML(f, teach.NewTimeline(s, res)); err != nil {
		f.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}

func failedOutcomes(res *replay.Result) int {
	n := 0
	for _, o := range res.Outcomes {
		if !o.Met {
			n++
		}
	}
	return n
}

// checkGolden compares the replay's trace with the golden file, in the golden file's format, or
// writes the golden file with --update-golden. It returns nil when there is no golden file.
func checkGolden(cfg replayConfig, file string, golden []byte, res *replay.Result) (*replay.GoldenCheck, error) {
	switch {
	case cfg.UpdateGolden:
		path := cfg.Golden
		if path == "" {
			path = replay.GoldenPath(file)
		}
		if err := os.WriteFile(path, replay.RenderTrace(res.Events, replay.GoldenFormatForPath(path)), 0o644); err != nil {
			return nil, fmt.Errorf("--update-golden: %w", err)
		}
		return &replay.GoldenCheck{File: path, Updated: true}, nil
	case cfg.Golden != "":
		got := replay.RenderTrace(res.Events, replay.GoldenFormat(golden))
		return &replay.GoldenCheck{File: cfg.Golden, Difference: replay.FirstDifference(golden, got)}, nil
	}
	return nil, nil
}
