package sources

import (
	"errors"
	"testing"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestConstructorsRequireOptions(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	out := make(chan podconfig.Update)
	tests := []struct {
		name string
		new  func() (any, error)
		want string // the whole error, or "" for success
	}{
		{"file", func() (any, error) {
			return NewFile(FileOptions{Path: "/m", Clock: clk, Tracer: trace.Discard})
		}, ""},
		{"fileNothing", func() (any, error) { return NewFile(FileOptions{}) },
			"file source: options Path, Clock, Tracer: missing required option"},
		{"fileNoTracer", func() (any, error) { return NewFile(FileOptions{Path: "/m", Clock: clk}) },
			"file source: options Tracer: missing required option"},
		{"http", func() (any, error) {
			return NewHTTP(HTTPOptions{URL: "http://m", Clock: clk, Tracer: trace.Discard})
		}, ""},
		{"httpNothing", func() (any, error) { return NewHTTP(HTTPOptions{}) },
			"http source: options URL, Clock, Tracer: missing required option"},
		{"httpNoClock", func() (any, error) { return NewHTTP(HTTPOptions{URL: "http://m", Tracer: trace.Discard}) },
			"http source: options Clock: missing required option"},
		{"api", func() (any, error) { return NewAPI(APIOptions{Tracer: trace.Discard}) }, ""},
		{"apiNothing", func() (any, error) { return NewAPI(APIOptions{}) },
			"api source: options Tracer: missing required option"},
		{"fileRunner", func() (any, error) {
			return NewFileRunner(FileRunnerOptions{Core: &File{}, Clock: clock.RealClock{}, Out: out, Watches: func() FileWatch { return nil }})
		}, ""},
		{"fileRunnerNothing", func() (any, error) { return NewFileRunner(FileRunnerOptions{}) },
			"file source: options Core, Clock, Out, Watches: missing required option"},
		{"httpRunner", func() (any, error) {
			return NewHTTPRunner(HTTPRunnerOptions{Core: &HTTP{}, Clock: clock.RealClock{}, Out: out})
		}, ""},
		{"httpRunnerNoOut", func() (any, error) { return NewHTTPRunner(HTTPRunnerOptions{Core: &HTTP{}, Clock: clock.RealClock{}}) },
			"http source: options Out: missing required option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.new()
			if tt.want == "" {
				if err != nil {
					t.Errorf("constructor error = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, minikubelet.ErrMissingOption) || err.Error() != tt.want {
				t.Errorf("constructor error = %v, want %q wrapping minikubelet.ErrMissingOption", err, tt.want)
			}
		})
	}
}
