package prober

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "failure", want: Rule{Outcome: OutcomeFailure}},
		{in: " success ", want: Rule{Outcome: OutcomeSuccess}},
		{in: "failure-for=20s", want: Rule{Outcome: OutcomeFailure, For: 20 * time.Second}},
		{in: "unknown-times=3", want: Rule{Outcome: OutcomeUnknown, Times: 3}},
		{in: "error-times=1", want: Rule{Outcome: OutcomeError, Times: 1}},
		{in: "fail", wantErr: `outcome "fail" is not one of`},
		{in: "failure-for=soon", wantErr: "positive duration"},
		{in: "failure-for=-1s", wantErr: "positive duration"},
		{in: "failure-times=0", wantErr: "positive integer"},
		{in: "failure-after=3", wantErr: "want <outcome>"},
		{in: "", wantErr: "is not one of"},
	}
	for _, tt := range tests {
		got, err := ParseRule(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRule(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if back, err := ParseRule(got.String()); err != nil || back != got {
			t.Errorf("ParseRule(%q.String() = %q) = %+v, %v; want the rule back", tt.in, got.String(), back, err)
		}
	}
}

func TestParseAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    map[string]map[ProbeType]Rule
		wantErr []string
	}{
		{name: "none", ann: nil, want: map[string]map[ProbeType]Rule{}},
		{name: "other minikubelet annotations are not probes",
			ann:  map[string]string{"minikubelet.io/exit-after.web": "5s", "example.com/x": "y"},
			want: map[string]map[ProbeType]Rule{}},
		{name: "two probes of one container",
			ann: map[string]string{"minikubelet.io/readiness-probe.web": "failure-for=20s", "minikubelet.io/liveness-probe.web": "failure-times=3"},
			want: map[string]map[ProbeType]Rule{"web": {
				Readiness: {Outcome: OutcomeFailure, For: 20 * time.Second},
				Liveness:  {Outcome: OutcomeFailure, Times: 3},
			}}},
		{name: "every error, each naming the pod and the key",
			ann: map[string]string{
				"minikubelet.io/readyness-probe.web": "failure",
				"minikubelet.io/startup-probe.db":    "failure",
				"minikubelet.io/startup-probe.":      "failure",
				"minikubelet.io/liveness-probe.web":  "sometimes",
			},
			want: map[string]map[ProbeType]Rule{},
			wantErr: []string{
				`pod ns/p: annotation minikubelet.io/liveness-probe.web: "sometimes"`,
				`pod ns/p: annotation minikubelet.io/readyness-probe.web: probe type "readyness"`,
				`pod ns/p: annotation minikubelet.io/startup-probe.: want minikubelet.io/startup-probe.<container>`,
				`pod ns/p: annotation minikubelet.io/startup-probe.db: the pod has no container "db"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnnotations("ns/p", tt.ann, []string{"web"})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Errorf("error = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBadAnnotation) {
				t.Errorf("error = %v, want ErrBadAnnotation", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.wantErr) {
				t.Fatalf("errors = %q, want %d", lines, len(tt.wantErr))
			}
			for i, w := range tt.wantErr {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q, want it to start with %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestScriptRules(t *testing.T) {
	now := vclock.Epoch
	s := NewScript()
	s.Set("ns/p", "c", Liveness, Rule{Outcome: OutcomeFailure, Times: 2}, now)
	s.Set("ns/p", "c", Readiness, Rule{Outcome: OutcomeUnknown, For: 10 * time.Second}, now)
	var got []string
	for _, at := range []time.Duration{0, 5 * time.Second, 9 * time.Second, 10 * time.Second} {
		for _, typ := range []ProbeType{Liveness, Readiness, Startup} {
			o, ok := s.answer("ns/p", "c", typ, now.Add(at))
			got = append(got, typ.Name()+"="+o.String()+map[bool]string{true: "", false: "(default)"}[ok])
		}
	}
	want := []string{
		"liveness=failure", "readiness=unknown", "startup=success(default)",
		"liveness=failure", "readiness=unknown", "startup=success(default)",
		"liveness=success(default)", "readiness=unknown", "startup=success(default)",
		"liveness=success(default)", "readiness=success(default)", "startup=success(default)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

func TestInstanceAnswer(t *testing.T) {
	start := vclock.Epoch
	for _, tt := range []struct {
		r       Rule
		attempt int
		at      time.Duration
		want    bool
	}{
		{Rule{Outcome: OutcomeFailure}, 100, time.Hour, true},
		{Rule{Outcome: OutcomeFailure, Times: 3}, 3, 0, true},
		{Rule{Outcome: OutcomeFailure, Times: 3}, 4, 0, false},
		{Rule{Outcome: OutcomeFailure, For: 20 * time.Second}, 1, 19 * time.Second, true},
		{Rule{Outcome: OutcomeFailure, For: 20 * time.Second}, 1, 20 * time.Second, false},
	} {
		if _, got := instanceAnswer(tt.r, tt.attempt, start, start.Add(tt.at)); got != tt.want {
			t.Errorf("instanceAnswer(%v, attempt %d, at %v) holds = %v, want %v", tt.r, tt.attempt, tt.at, got, tt.want)
		}
	}
}

func FuzzParseAnnotations(f *testing.F) {
	f.Add("minikubelet.io/readiness-probe.web", "failure-for=20s")
	f.Add("minikubelet.io/liveness-probe.web", "unknown-times=3")
	f.Add("minikubelet.io/startup-probe.", "error")
	f.Add("minikubelet.io/x-probe.web", "failure=")
	f.Fuzz(func(t *testing.T, key, value string) {
		rules, err := ParseAnnotations("ns/p", map[string]string{key: value}, []string{"web"})
		if err != nil {
			if !errors.Is(err, ErrBadAnnotation) || !strings.Contains(err.Error(), "pod ns/p") {
				t.Fatalf("error %v does not wrap ErrBadAnnotation or name the pod", err)
			}
			return
		}
		for _, byType := range rules {
			for _, r := range byType {
				if r.Times < 0 || r.For < 0 || r.Outcome < OutcomeSuccess || r.Outcome > OutcomeError {
					t.Fatalf("accepted %q=%q as %+v", key, value, r)
				}
				if back, err := ParseRule(r.String()); err != nil || back != r {
					t.Fatalf("rule %+v does not round-trip: %+v, %v", r, back, err)
				}
			}
		}
	})
}
