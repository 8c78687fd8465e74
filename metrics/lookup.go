package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// ErrNoSeries is wrapped by Value when no series has the name and labels asked for.
var ErrNoSeries = errors.New("no such series")

// Value returns the value of one series as /metrics would print it: name is a counter's or a
// gauge's family name, or a histogram's family name with the _count or _sum suffix; labels must
// equal the series' labels (nil or empty for a series without labels).
// The prober's families (/metrics/probes) are looked up too.
func (r *Registry) Value(name string, labels map[string]string) (float64, error) {
	families, err := r.reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("metric %s: gather: %w", name, err)
	}
	probes, err := r.probeReg.Gather()
	if err != nil {
		return 0, fmt.Errorf("metric %s: gather: %w", name, err)
	}
	families = append(families, probes...)
	for _, mf := range families {
		family, suffix := mf.GetName(), ""
		if name != family {
			switch {
			case mf.GetType() == dto.MetricType_HISTOGRAM && name == family+"_count":
				suffix = "_count"
			case mf.GetType() == dto.MetricType_HISTOGRAM && name == family+"_sum":
				suffix = "_sum"
			default:
				continue
			}
		}
		for _, m := range mf.GetMetric() {
			if !labelsEqual(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), nil
			case m.Gauge != nil:
				return m.Gauge.GetValue(), nil
			case m.Histogram != nil && suffix == "_count":
				return float64(m.Histogram.GetSampleCount()), nil
			case m.Histogram != nil && suffix == "_sum":
				return m.Histogram.GetSampleSum(), nil
			}
		}
	}
	return 0, fmt.Errorf("metric %s%s: %w", name, formatLabels(labels), ErrNoSeries)
}

func labelsEqual(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, lp := range got {
		v, ok := want[lp.GetName()]
		if !ok || v != lp.GetValue() {
			return false
		}
	}
	return true
}

// formatLabels prints labels as Prometheus does, in name order.
func formatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}
