package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ExpectMetric asserts one series of the node's kubelet metrics at this instant: Name is a
// counter's or gauge's family (kubelet_started_pods_total) or a histogram's with _count or _sum
// (kubelet_pod_worker_duration_seconds_count); Labels must equal the series' labels. Value asks
// for an exact value; Min and Max bound it (inclusive). At least one of the three is set.
type ExpectMetric struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  *float64          `json:"value,omitempty"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
}

var _ expectation = (*ExpectMetric)(nil)

func (x *ExpectMetric) validate() error {
	var errs []error
	errs = append(errs, required("name", x.Name))
	if x.Value == nil && x.Min == nil && x.Max == nil {
		errs = append(errs, errors.New("expectMetric needs value, min or max"))
	}
	if x.Value != nil && (x.Min != nil || x.Max != nil) {
		errs = append(errs, errors.New("expectMetric: value excludes min and max"))
	}
	if x.Min != nil && x.Max != nil && *x.Min > *x.Max {
		errs = append(errs, fmt.Errorf("expectMetric: min %v above max %v", *x.Min, *x.Max))
	}
	return errors.Join(errs...)
}

// series prints the name and labels as Prometheus does, labels in name order.
func (x *ExpectMetric) series() string {
	if len(x.Labels) == 0 {
		return x.Name
	}
	names := make([]string, 0, len(x.Labels))
	for k := range x.Labels {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + strconv.Quote(x.Labels[k])
	}
	return x.Name + "{" + strings.Join(parts, ",") + "}"
}

// want prints the condition: "=3", ">=1", "<=2", ">=1 <=2".
func (x *ExpectMetric) want() string {
	f := formatValue
	if x.Value != nil {
		return "=" + f(*x.Value)
	}
	var parts []string
	if x.Min != nil {
		parts = append(parts, ">="+f(*x.Min))
	}
	if x.Max != nil {
		parts = append(parts, "<="+f(*x.Max))
	}
	return strings.Join(parts, " ")
}

// judge reads the series from n's kubelet metrics registry.
func (x *ExpectMetric) judge(_ context.Context, _ *engine, n *node) Outcome {
	o := Outcome{What: x.describe()}
	got, ok, err := n.kubelet.Metrics.Value(x.Name, x.Labels)
	switch {
	case err != nil:
		o.Seen = err.Error()
		return o
	case !ok:
		o.Seen = "no such series"
		return o
	}
	o.Met = (x.Value == nil || got == *x.Value) && (x.Min == nil || got >= *x.Min) && (x.Max == nil || got <= *x.Max)
	if !o.Met {
		o.Seen = formatValue(got)
	}
	return o
}

func (x *ExpectMetric) describe() string { return "expectMetric " + x.series() + " " + x.want() }

// formatValue prints a sample value without an exponent, so Unix times read as such.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
