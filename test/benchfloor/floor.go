package benchfloor

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Manifest is the static pod the floor decodes: manifests/web.yaml, which a test keeps equal to
// the file.
const Manifest = `# A plain web server with no namespace: the kubelet puts it in "default".
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    ports:
    - containerPort: 80
      name: http
    resources:
      requests:
        cpu: 50m
        memory: 64Mi
`

// Metric is the unit of the ratio a benchmark reports.
const Metric = "floor-ratio"

// rounds and round are how the floor is sampled: the median of rounds timings of round each, so
// that one descheduling does not move it.
const (
	rounds = 7
	round  = 20 * time.Millisecond
)

// Measure returns the floor: the median, over a few short rounds, of the time to decode Manifest.
// It takes about 150 ms.
func Measure() (time.Duration, error) {
	data := []byte(Manifest)
	if err := decode(data); err != nil { // warm up, and fail early
		return 0, err
	}
	perOp := make([]time.Duration, 0, rounds)
	for range rounds {
		n := 0
		start := time.Now()
		for time.Since(start) < round {
			if err := decode(data); err != nil {
				return 0, err
			}
			n++
		}
		perOp = append(perOp, time.Since(start)/time.Duration(n))
	}
	slices.Sort(perOp)
	return perOp[rounds/2], nil
}

// Floor measures the floor for b, failing it if the manifest does not decode. Call it before
// b.Loop (or before b.ResetTimer) so that the benchmark's time leaves it out.
func Floor(b *testing.B) time.Duration {
	b.Helper()
	f, err := Measure()
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// Report reports cost, the benchmark's time per unit of its target (an hour replayed, one pod to
// Running), as a multiple of floor under Metric, with the floor itself in ns as "floor-ns".
func Report(b *testing.B, cost, floor time.Duration) {
	b.Helper()
	b.ReportMetric(Ratio(cost, floor), Metric)
	b.ReportMetric(float64(floor.Nanoseconds()), "floor-ns")
}

// Ratio is cost as a multiple of floor.
func Ratio(cost, floor time.Duration) float64 {
	return float64(cost) / float64(floor)
}

// decode is the floor's unit of work.
func decode(data []byte) error {
	var pod v1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return fmt.Errorf("decode the floor's manifest: %w", err)
	}
	return nil
}
