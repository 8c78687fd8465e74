package filewatch

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"
)

// fakeSource records the calls that reach the one watcher.
type fakeSource struct {
	calls  []string
	fail   map[string]error // Add of these paths fails
	closed bool
}

func (f *fakeSource) Add(path string) error {
	if err := f.fail[path]; err != nil {
		return err
	}
	f.calls = append(f.calls, "add "+path)
	return nil
}

func (f *fakeSource) Remove(path string) error {
	f.calls = append(f.calls, "remove "+path)
	return nil
}

func (f *fakeSource) Close() error { f.closed = true; return nil }

func newFake(t *testing.T) (*Shared, *fakeSource) {
	t.Helper()
	src := &fakeSource{fail: map[string]error{"/missing": errors.New("no such file or directory")}}
	s, err := New(Options{Source: src, Events: make(chan fsnotify.Event), Errors: make(chan error)})
	if err != nil {
		t.Fatal(err)
	}
	return s, src
}

// drained is what Drain gives a Watch: its events as "op name", then its error, if any.
func drained(w *Watch) []string {
	select {
	case <-w.Wake():
	default:
		return nil // nothing signalled, nothing may be pending
	}
	evs, err := w.Drain(nil)
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Op.String()+" "+ev.Name)
	}
	if err != nil {
		out = append(out, "error "+err.Error())
	}
	return out
}

// step is one thing a test does: a Watch's Add, Remove or Close, or an event or error of the
// one watcher.
type step struct {
	watch string // "a" or "b"
	add   string
	rm    string
	close bool
	event *fsnotify.Event
	err   error
}

func ev(op fsnotify.Op, name string) step { return step{event: &fsnotify.Event{Name: name, Op: op}} }

func TestRoute(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		want      map[string][]string // per Watch, what Drain gives at the end
		wantCalls []string            // what reached the one watcher
		wantErr   []string            // the errors of the steps that fail
	}{{
		name: "two watches of one directory both get its events",
		steps: []step{{watch: "a", add: "/pods"}, {watch: "b", add: "/pods"},
			ev(fsnotify.Create, "/pods/web.yaml"), ev(fsnotify.Write, "/pods/web.yaml")},
		want: map[string][]string{
			"a": {"CREATE /pods/web.yaml", "WRITE /pods/web.yaml"},
			"b": {"CREATE /pods/web.yaml", "WRITE /pods/web.yaml"},
		},
		wantCalls: []string{"add /pods", "add /pods"},
	}, {
		name: "one watch's remove leaves the other's",
		steps: []step{{watch: "a", add: "/pods"}, {watch: "b", add: "/pods/"}, {watch: "a", rm: "/pods"},
			ev(fsnotify.Remove, "/pods/web.yaml")},
		want:      map[string][]string{"b": {"REMOVE /pods/web.yaml"}},
		wantCalls: []string{"add /pods", "add /pods"},
	}, {
		name: "the last remove reaches the watcher",
		steps: []step{{watch: "a", add: "/pods"}, {watch: "b", add: "/pods"}, {watch: "a", rm: "/pods"},
			{watch: "b", rm: "/pods"}, ev(fsnotify.Create, "/pods/web.yaml")},
		wantCalls: []string{"add /pods", "add /pods", "remove /pods"},
	}, {
		name:      "a remove of a path never added fails",
		steps:     []step{{watch: "a", add: "/pods"}, {watch: "b", rm: "/pods"}, ev(fsnotify.Create, "/pods/x")},
		want:      map[string][]string{"a": {"CREATE /pods/x"}},
		wantCalls: []string{"add /pods"},
		wantErr:   []string{"fsnotify: can't remove non-existent watch: /pods"},
	}, {
		name: "close removes only what no other watch holds",
		steps: []step{{watch: "a", add: "/reg"}, {watch: "a", add: "/pods"}, {watch: "b", add: "/pods"},
			{watch: "a", close: true}, ev(fsnotify.Create, "/pods/x"), ev(fsnotify.Create, "/reg/y")},
		want:      map[string][]string{"b": {"CREATE /pods/x"}},
		wantCalls: []string{"add /reg", "add /pods", "add /pods", "remove /reg"},
	}, {
		name:      "a watched file gets its own events",
		steps:     []step{{watch: "a", add: "/etc/web.yaml"}, ev(fsnotify.Write, "/etc/web.yaml"), ev(fsnotify.Create, "/etc/other.yaml")},
		want:      map[string][]string{"a": {"WRITE /etc/web.yaml"}},
		wantCalls: []string{"add /etc/web.yaml"},
	}, {
		// fsnotify sends the parent's delete and drops the directory's own when it watches
		// both: a watcher of the directory alone still gets one, as its own fsnotify would.
		name: "a deleted sub-directory reaches each watch once",
		steps: []step{{watch: "a", add: "/reg"}, {watch: "a", add: "/reg/drv"}, {watch: "b", add: "/reg/drv"},
			ev(fsnotify.Remove, "/reg/drv")},
		want: map[string][]string{
			"a": {"REMOVE /reg/drv"},
			"b": {"REMOVE /reg/drv"},
		},
		wantCalls: []string{"add /reg", "add /reg/drv", "add /reg/drv"},
	}, {
		name:      "events of other directories go nowhere",
		steps:     []step{{watch: "a", add: "/reg"}, ev(fsnotify.Create, "/regs/x"), ev(fsnotify.Create, "/reg/drv/x")},
		wantCalls: []string{"add /reg"},
	}, {
		name:      "a failed add leaves nothing watched",
		steps:     []step{{watch: "a", add: "/missing"}, ev(fsnotify.Create, "/missing/x")},
		wantErr:   []string{"no such file or directory"},
		wantCalls: nil,
	}, {
		name:  "an error of the watcher reaches every watch",
		steps: []step{{watch: "a", add: "/reg"}, {watch: "b", add: "/pods"}, {err: errors.New("read failed")}},
		want: map[string][]string{
			"a": {"error read failed"},
			"b": {"error read failed"},
		},
		wantCalls: []string{"add /reg", "add /pods"},
	}, {
		name:      "an add after close fails",
		steps:     []step{{watch: "a", close: true}, {watch: "a", add: "/reg"}},
		wantErr:   []string{"watch /reg: fsnotify: watcher already closed"},
		wantCalls: nil,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, src := newFake(t)
			ws := map[string]*Watch{"a": s.Watch(), "b": s.Watch()}
			var errs []string
			for _, st := range tt.steps {
				var err error
				switch w := ws[st.watch]; {
				case st.event != nil:
					s.route(*st.event)
				case st.err != nil:
					s.broadcast(st.err)
				case st.add != "":
					err = w.Add(st.add)
				case st.rm != "":
					err = w.Remove(st.rm)
				case st.close:
					err = w.Close()
				}
				if err != nil {
					errs = append(errs, err.Error())
				}
			}
			got := map[string][]string{}
			for name, w := range ws {
				if d := drained(w); d != nil {
					got[name] = d
				}
			}
			want := tt.want
			if want == nil {
				want = map[string][]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("drained (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, src.calls); diff != "" {
				t.Errorf("watcher calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, errs); diff != "" {
				t.Errorf("step errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A Watch that does not drain loses what is past the kernel's queue, and is told once.
func TestOverflow(t *testing.T) {
	s, _ := newFake(t)
	w := s.Watch()
	if err := w.Add("/pods"); err != nil {
		t.Fatal(err)
	}
	for i := range maxQueued + 10 {
		s.route(fsnotify.Event{Name: fmt.Sprintf("/pods/%d.yaml", i), Op: fsnotify.Create})
	}
	evs, err := w.Drain(nil)
	if len(evs) != maxQueued || !errors.Is(err, fsnotify.ErrEventOverflow) {
		t.Errorf("Drain() = %d events, %v; want %d, %v", len(evs), err, maxQueued, fsnotify.ErrEventOverflow)
	}
	s.route(fsnotify.Event{Name: "/pods/late.yaml", Op: fsnotify.Create})
	if evs, err := w.Drain(nil); len(evs) != 1 || err != nil {
		t.Errorf("Drain() after the overflow = %v, %v; want the one late event", evs, err)
	}
}

// Run routes what the one watcher sends, and once it stops every Watch, even one made after,
// reports ErrClosed and the watcher is closed.
func TestRunRoutesUntilDone(t *testing.T) {
	src := &fakeSource{}
	events, errs := make(chan fsnotify.Event), make(chan error)
	s, err := New(Options{Source: src, Events: events, Errors: errs})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Watch()
	if err := w.Add("/pods"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	events <- fsnotify.Event{Name: "/pods/a.yaml", Op: fsnotify.Create}
	<-w.Wake()
	if evs, err := w.Drain(nil); len(evs) != 1 || evs[0].Name != "/pods/a.yaml" || err != nil {
		t.Errorf("Drain() = %v, %v; want the create of /pods/a.yaml", evs, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
	if !src.closed {
		t.Error("the watcher was not closed")
	}
	for _, w := range []*Watch{w, s.Watch()} {
		<-w.Wake()
		if _, err := w.Drain(nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Drain() after Run = %v, want %v", err, ErrClosed)
		}
	}
}

func TestNewRequiresOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil || err.Error() != "new file watch: options Source, Events and Errors: missing required option" {
		t.Errorf("New(Options{}) = %v", err)
	}
}
