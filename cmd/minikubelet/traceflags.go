package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// traceFlags choose what the trace shows and how, for run and replay alike (docs/trace.md,
// "Choosing what is shown").
type traceFlags struct {
	format     string
	pods       []string
	components []string
	quiet      bool
	level      string
	uid        bool
	wide       bool
}

func (f *traceFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.format, "trace-format", "text", "trace output: text (lines of at most 120 columns, an event's fields never cut) or json (JSON Lines, every field)")
	fs.StringSliceVar(&f.pods, "trace-pod", nil, "show only the events of these pods (namespace/name, or name in the default namespace); repeat or separate with commas")
	fs.StringSliceVar(&f.components, "trace-component", nil, "show only the events of these components (sources, podconfig, syncloop, podworkers, runtime, pleg, status, ...)")
	fs.BoolVar(&f.quiet, "trace-quiet", false, "hide what repeats without news: pod worker requeues, SETs that change nothing (relists, the API echo) and the echo of the kubelet's own status writes")
	fs.StringVar(&f.level, "trace-level", trace.LevelPipeline.String(), "how much to show: problems (0), lifecycle (1) or pipeline (2, everything)")
	fs.BoolVar(&f.uid, "trace-uid", false, "show the first 8 characters of each pod's UID in the text form")
	fs.BoolVar(&f.wide, "wide", false, "keep each event of the text form on one line however long, instead of continuation lines")
}

// traceView is the output side of the trace flags.
type traceView struct {
	Format trace.Format
	Text   trace.TextOptions
	View   trace.ViewOptions
}

// resolve checks the flags' values.
func (f *traceFlags) resolve() (traceView, error) {
	format, err := trace.ParseFormat(f.format)
	if err != nil {
		return traceView{}, fmt.Errorf("--trace-format: %w", err)
	}
	level, err := trace.ParseLevel(f.level)
	if err != nil {
		return traceView{}, fmt.Errorf("--trace-level: %w", err)
	}
	v := traceView{Format: format, Text: trace.TextOptions{UID: f.uid, Wide: f.wide},
		View: trace.ViewOptions{Pods: f.pods, Quiet: f.quiet, Level: level}}
	for _, c := range f.components {
		if !slices.Contains(trace.Components, trace.Component(c)) {
			names := make([]string, len(trace.Components))
			for i, c := range trace.Components {
				names[i] = string(c)
			}
			return traceView{}, fmt.Errorf("--trace-component: unknown component %q: want one of %s", c, strings.Join(names, ", "))
		}
		v.View.Components = append(v.View.Components, trace.Component(c))
	}
	return v, nil
}

// filtered reports whether the view hides some events.
func (v traceView) filtered() bool {
	return len(v.View.Pods) > 0 || len(v.View.Components) > 0 || v.View.Quiet || v.View.Level != 0 && v.View.Level != trace.LevelPipeline
}

// newView returns a fresh View for one output, or nil when every event is shown.
func (v traceView) newView() *trace.View {
	if !v.filtered() {
		return nil
	}
	return trace.NewView(v.View)
}
