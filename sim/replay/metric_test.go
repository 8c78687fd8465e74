package replay

import (
	"errors"
	"strings"
	"testing"
)

func TestParseExpectMetricErrors(t *testing.T) {
	head := "name: bad\nsources: [file]\nsteps:\n- at: 1s\n  expectMetric: "
	for _, tt := range []struct{ src, want string }{
		{"{value: 1}", "name is required"},
		{"{name: kubelet_running_pods}", "needs value, min or max"},
		{"{name: kubelet_running_pods, value: 1, min: 0}", "value excludes min and max"},
		{"{name: kubelet_running_pods, min: 2, max: 1}", "min 2 above max 1"},
		{"{name: kubelet_running_pods, value: one}", "step 1"},
	} {
		_, err := Parse("bad.yaml", []byte(head+tt.src+"\n"), LoadOptions{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid containing %q", tt.src, err, tt.want)
		}
	}
}

// TestExpectMetricOutcomes: exact values, bounds, an unknown series and label mismatches, as the
// replay summary prints them.
func TestExpectMetricOutcomes(t *testing.T) {
	src := `name: m
sources: [file]
steps:
- at: 3s
  expectMetric: {name: kubelet_node_name, labels: {node: node-1}, value: 1}
- at: 3s
  expectMetric: {name: kubelet_pleg_relist_interval_seconds_count, min: 3, max: 3}
- at: 3s
  expectMetric: {name: kubelet_pleg_relist_interval_seconds_count, max: 2}
- at: 3s
  expectMetric: {name: kubelet_node_name, labels: {node: node-2}, value: 1}
- at: 3s
  expectMetric: {name: kubelet_no_such_metric, min: 0}
`
	s, err := Parse("m.yaml", []byte(src), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), s, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range res.Outcomes {
		line := o.What
		if !o.Met {
			line += "; saw " + o.Seen
		}
		got = append(got, line)
	}
	want := []string{
		`expectMetric kubelet_node_name{node="node-1"} =1`,
		`expectMetric kubelet_pleg_relist_interval_seconds_count >=3 <=3`,
		`expectMetric kubelet_pleg_relist_interval_seconds_count <=2; saw 3`,
		`expectMetric kubelet_node_name{node="node-2"} =1; saw no such series`,
		`expectMetric kubelet_no_such_metric >=0; saw no such series`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outcomes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
