package replay

import (
	"bytes"
	"strings"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"same", "a\nb\n", "a\nb\n", ""},
		{"changed line", "a\nb\n", "a\nc\n", "line 2:\n  want \"b\"\n  got  \"c\""},
		{"extra line", "a\n", "a\nb\n", `line 2: unexpected extra line "b"`},
		{"missing line", "a\nb\n", "a\n", `line 2: missing line "b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FirstDifference([]byte(tt.want), []byte(tt.got)); got != tt.diff {
				t.Errorf("FirstDifference() = %q, want %q", got, tt.diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	r := &Result{Name: "demo", Outcomes: []Outcome{
		{Step: 2, What: "expect default/web phase=Running", Met: true},
		{Step: 4, What: "expect default/web mirror=absent", Seen: "mirror=present"},
	}}
	if r.Passed() {
		t.Error("Passed() = true with a failed outcome")
	}
	var b bytes.Buffer
	r.WriteSummary(&b)
	for _, want := range []string{"ok    step 2", "FAIL  step 4", "saw mirror=present", "expectations: 1 met, 1 failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteSummary() = %q, want it to contain %q", b.String(), want)
		}
	}
}
