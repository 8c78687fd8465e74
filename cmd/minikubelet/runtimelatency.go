package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/fakeruntime"
)

// runtimeLatencyKeys are the keys of --runtime-latencies: the names of a scenario's runtime:
// block, so that a latency reads the same in `run` and in `replay`.
var runtimeLatencyKeys = []string{"sandboxStart", "imagePull", "imagePullPresent", "containerStart", "containerStop"}

// runtimeLatencyField is the field of l that a --runtime-latencies key sets, nil for an unknown key.
func runtimeLatencyField(l *fakeruntime.Latencies, key string) *time.Duration {
	switch key {
	case "sandboxStart":
		return &l.SandboxStart
	case "imagePull":
		return &l.ImagePull
	case "imagePullPresent":
		return &l.ImagePullPresent
	case "containerStart":
		return &l.ContainerStart
	case "containerStop":
		return &l.ContainerStop
	}
	return nil
}

// runtimeLatencyDefaults lists run's default latencies as key=duration pairs, for the flag's
// help, read from the runtime's own defaults so that the help cannot drift from them.
func runtimeLatencyDefaults() string {
	l := fakeruntime.DefaultLatencies
	pairs := make([]string, 0, len(runtimeLatencyKeys))
	for _, key := range runtimeLatencyKeys {
		pairs = append(pairs, key+"="+runtimeLatencyField(&l, key).String())
	}
	return strings.Join(pairs, ", ")
}

// parseRuntimeLatencies reads --runtime-latencies over run's defaults (fakeruntime.DefaultLatencies):
// empty keeps them; a duration alone sets every step ("0" makes the runtime instant, as KWOK's
// stages and kubemark's fake runtime are); key=duration pairs, comma-separated, set the steps
// they name and keep the others. A duration is Go's (500ms, 2s) and not negative.
func parseRuntimeLatencies(s string) (fakeruntime.Latencies, error) {
	l := fakeruntime.DefaultLatencies
	s = strings.TrimSpace(s)
	if s == "" {
		return l, nil
	}
	if !strings.Contains(s, "=") {
		d, err := parseRuntimeLatency(s)
		if err != nil {
			return l, fmt.Errorf("--runtime-latencies %q: %w", s, err)
		}
		for _, key := range runtimeLatencyKeys {
			*runtimeLatencyField(&l, key) = d
		}
		return l, nil
	}
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(s, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return l, fmt.Errorf("--runtime-latencies %q: %q is not key=duration", s, pair)
		}
		field := runtimeLatencyField(&l, key)
		if field == nil {
			return l, fmt.Errorf("--runtime-latencies %q: unknown step %q (known: %s)", s, key, strings.Join(runtimeLatencyKeys, ", "))
		}
		if seen[key] {
			return l, fmt.Errorf("--runtime-latencies %q: %s is given twice", s, key)
		}
		seen[key] = true
		d, err := parseRuntimeLatency(value)
		if err != nil {
			return l, fmt.Errorf("--runtime-latencies %q, %s: %w", s, key, err)
		}
		*field = d
	}
	return l, nil
}

// parseRuntimeLatency is one latency: a Go duration, not negative.
func parseRuntimeLatency(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("a latency must not be negative, got %v", d)
	}
	return d, nil
}
