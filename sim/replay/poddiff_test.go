package replay

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLineDiff(t *testing.T) {
	lines := func(s string) []string { return strings.Split(s, "\n") }
	for _, tt := range []struct {
		name string
		a, b string
		want string
	}{
		{name: "equal", a: "a\nb", b: "a\nb", want: ""},
		{name: "changed line in the middle", a: "1\n2\n3\n4\n5\n6\n7", b: "1\n2\n3\nX\n5\n6\n7",
			want: " 2\n 3\n-4\n+X\n 5\n 6"},
		{name: "added at the end", a: "1\n2\n3\n4", b: "1\n2\n3\n4\n5", want: " 3\n 4\n+5"},
		{name: "two hunks", a: "a\n1\n2\n3\n4\n5\n6\nb", b: "A\n1\n2\n3\n4\n5\n6\nB",
			want: "-a\n+A\n 1\n 2\n...\n 5\n 6\n-b\n+B"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lineDiff(lines(tt.a), lines(tt.b))); diff != "" {
				t.Errorf("lineDiff mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
