package results

import "testing"

func TestCacheSetReportsChanges(t *testing.T) {
	c := NewCache()
	steps := []struct {
		id   string
		r    Result
		want bool
	}{
		{"c1", Failure, true},  // absent: an update
		{"c1", Failure, false}, // same value: none
		{"c1", Success, true},
		{"c2", Success, true},
	}
	for i, s := range steps {
		if got := c.Set(s.id, s.r); got != s.want {
			t.Errorf("step %d: Set(%s, %v) = %v, want %v", i, s.id, s.r, got, s.want)
		}
	}
	if r, ok := c.Get("c1"); !ok || r != Success {
		t.Errorf("Get(c1) = %v, %v; want Success, true", r, ok)
	}
	c.Remove("c1")
	if _, ok := c.Get("c1"); ok || c.Len() != 1 {
		t.Errorf("after Remove: Get(c1) found, or Len %d != 1", c.Len())
	}
	if got := c.Set("c1", Success); !got {
		t.Error("Set after Remove reported no change")
	}
}

func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{Unknown: "Unknown", Success: "Success", Failure: "Failure", Result(7): "Result(7)"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}
