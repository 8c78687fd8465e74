// Package benchfloor measures the floor the speed benchmarks are compared with: decoding one
// static-pod manifest (manifests/web.yaml) into a v1.Pod with sigs.k8s.io/yaml, timed in the same
// process as the benchmark. A benchmark reports its time divided by the floor as "floor-ratio", so
// that a slower or busier machine, which slows both, does not hide a regression or invent one.
//
// It has no kubelet counterpart: it is a yardstick for docs/benchmarks.md.
package benchfloor
