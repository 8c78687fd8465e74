package metrics

import (
	"fmt"

	dto "github.com/prometheus/client_model/go"
)

// Value returns the value of one series as /metrics would print it: name is a counter's or a
// gauge's family name, or a histogram's family name with the _count or _sum suffix; labels must
// equal the series' labels (nil or empty for a series without labels).
// The prober's families (/metrics/probes) are looked up too. ok is false when no series has the
// name and labels; an error is a registry that could not be gathered.
func (r *Registry) Value(name string, labels map[string]string) (v float64, ok bool, err error) {
	r.flushPending()
	families, err := r.reg.Gather()
	if err != nil {
		return 0, false, fmt.Errorf("metric %s: gather: %w", name, err)
	}
	probes, err := r.probeReg.Gather()
	if err != nil {
		return 0, false, fmt.Errorf("metric %s: gather: %w", name, err)
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
				return m.Counter.GetValue(), true, nil
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true, nil
			case m.Histogram != nil && suffix == "_count":
				return float64(m.Histogram.GetSampleCount()), true, nil
			case m.Histogram != nil && suffix == "_sum":
				return m.Histogram.GetSampleSum(), true, nil
			}
		}
	}
	return 0, false, nil
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
