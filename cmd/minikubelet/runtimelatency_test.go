package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/fakeruntime"
)

func TestParseRuntimeLatencies(t *testing.T) {
	def := fakeruntime.DefaultLatencies
	withPull := def
	withPull.ImagePull, withPull.ContainerStart = 0, 3*time.Second
	for _, tc := range []struct {
		in   string
		want fakeruntime.Latencies
	}{
		{"", def},
		{"0", fakeruntime.Latencies{}},
		{"1s", fakeruntime.Latencies{SandboxStart: time.Second, ImagePull: time.Second, ImagePullPresent: time.Second, ContainerStart: time.Second, ContainerStop: time.Second}},
		{"imagePull=0, containerStart=3s", withPull},
		{"sandboxStart=0,imagePull=0,imagePullPresent=0,containerStart=0,containerStop=0", fakeruntime.Latencies{}},
	} {
		got, err := parseRuntimeLatencies(tc.in)
		if err != nil {
			t.Errorf("parseRuntimeLatencies(%q) error = %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parseRuntimeLatencies(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseRuntimeLatenciesErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"soon", `--runtime-latencies "soon": time: invalid duration`},
		{"-2s", "a latency must not be negative, got -2s"},
		{"imagePull=2s,pull=1s", `unknown step "pull" (known: sandboxStart, imagePull, imagePullPresent, containerStart, containerStop)`},
		{"imagePull=2s,imagePull=1s", "imagePull is given twice"},
		{"imagePull=2s,0", `"0" is not key=duration`},
		{"containerStop=-1ms", "containerStop: a latency must not be negative"},
		{"imagePull=", "imagePull: time: invalid duration"},
	} {
		_, err := parseRuntimeLatencies(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseRuntimeLatencies(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

// TestRuntimeLatenciesFlag: the flag reaches the run configuration, and without it the runtime
// keeps run's defaults.
func TestRuntimeLatenciesFlag(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want fakeruntime.Latencies
	}{{nil, fakeruntime.DefaultLatencies}, {[]string{"--runtime-latencies=0"}, fakeruntime.Latencies{}}} {
		cfg, err := resolveArgs(t, append([]string{"--hostname-override", "n1"}, tc.args...)...)
		if err != nil {
			t.Fatalf("resolve(%q) error = %v", tc.args, err)
		}
		if cfg.RuntimeLatencies == nil {
			t.Fatalf("resolve(%q).RuntimeLatencies = nil", tc.args)
		}
		if diff := cmp.Diff(tc.want, *cfg.RuntimeLatencies); diff != "" {
			t.Errorf("resolve(%q).RuntimeLatencies mismatch (-want +got):\n%s", tc.args, diff)
		}
	}
}

// FuzzParseRuntimeLatencies: any flag value is either an error or latencies that are not negative.
func FuzzParseRuntimeLatencies(f *testing.F) {
	for _, s := range []string{"", "0", "1s", "imagePull=0,containerStart=3s", "x=1", "=,=", "-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseRuntimeLatencies(s)
		if err != nil {
			return
		}
		for _, d := range []time.Duration{l.SandboxStart, l.ImagePull, l.ImagePullPresent, l.ContainerStart, l.ContainerStop} {
			if d < 0 {
				t.Errorf("parseRuntimeLatencies(%q) = %+v, with a negative latency", s, l)
			}
		}
	})
}
