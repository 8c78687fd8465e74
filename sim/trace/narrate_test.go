package trace

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogueRowsOfAPairAgree checks that the rows of one (component, kind) have one level and
// one noise: LevelOf and a View read the first row of the pair.
func TestCatalogueRowsOfAPairAgree(t *testing.T) {
	for k, idx := range rows {
		first := Catalogue[idx[0]]
		for _, i := range idx[1:] {
			if en := Catalogue[i]; en.Level != first.Level || en.Noise != first.Noise {
				t.Errorf("(%s, %s) rows %d and %d: level %v and %v, noise %v and %v, want one of each",
					k.c, k.k, idx[0], i, first.Level, en.Level, first.Noise, en.Noise)
			}
		}
	}
}

// TestLevelTableMatchesCatalogue checks docs/trace.md's table of levels against the catalogue's
// Level column: every word a level's row names in backticks is an event word with a row at that
// level, or a component with one.
func TestLevelTableMatchesCatalogue(t *testing.T) {
	doc, err := os.ReadFile(catalogueDoc)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(problems|lifecycle|pipeline)` \\([0-9]\\) \\| (.*) \\|$")
	found := 0
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		found++
		level, err := ParseLevel(m[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range backticked.FindAllStringSubmatch(m[2], -1) {
			ok := false
			for _, en := range Catalogue {
				if en.Level == level && (string(en.Kind) == w[1] || string(en.Component) == w[1]) {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("docs/trace.md lists `%s` at level %s: no catalogue row of that word or component has that level", w[1], level)
			}
		}
	}
	if found != 3 {
		t.Errorf("docs/trace.md has %d rows in its table of levels, want 3", found)
	}
}

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		name string
		e    Event
		want []string // the row's reasons
		ok   bool
	}{
		{"exact", Event{Component: Runtime, Event: KindBackOff, Reason: "CrashLoopBackOff", Func: "doBackOff"}, []string{"CrashLoopBackOff"}, true},
		{"by func", Event{Component: Runtime, Event: KindBackOff, Func: "doBackOff"}, []string{"CrashLoopBackOff"}, true},
		{"by pair", Event{Component: Runtime, Event: KindBackOff}, []string{"ImagePullBackOff"}, true},
		{"no row", Event{Component: PodManager, Event: KindState}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en, ok := Lookup(tt.e)
			if ok != tt.ok || strings.Join(en.Reasons, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Lookup(%+v) = %v, %v, want the row of reasons %v, %v", tt.e, en.Reasons, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSays(t *testing.T) {
	e := Event{Component: Sources, Event: KindSet, Pod: "default/web", Op: "ADD", Source: "file",
		Pods: []string{"a", "b", "c", "d", "e"}, Delay: 90 * time.Second, Func: "listConfig"}
	for _, tt := range []struct {
		template, want string
	}{
		{"{an op} of {pods} from {source}{(func)}", "an ADD of a, b, c and 2 more pods from file (listConfig)"},
		{"{pod} waits {delay}{(message)}{ reason}.", "default/web waits 1m30s."},
		{"{component}: {event}{ pod}", "sources: set default/web"},
	} {
		if got := says(tt.template)(e, NewStory()); got != tt.want {
			t.Errorf("says(%q) = %q, want %q", tt.template, got, tt.want)
		}
	}
	for _, bad := range []string{"{podd}", "{pod"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("says(%q) did not panic, want a panic for a template the catalogue cannot hold", bad)
				}
			}()
			says(bad)
		}()
	}
}

// TestStoryRemembers tells a restart after an exit and a back-off, and one with neither.
func TestStoryRemembers(t *testing.T) {
	ctr := func(k Kind, at time.Duration) Event {
		return Event{T: at, Component: Runtime, Event: k, Pod: "default/web", Container: "app", ExitCode: Int(1), Reason: "Error"}
	}
	s := NewStory()
	for _, tt := range []struct {
		e    Event
		want string
	}{
		{ctr(KindStarted, time.Second), "container app runs"},
		{ctr(KindExited, 3*time.Second), "container app exits with code 1 (Error)"},
		{ctr(KindStarted, 4*time.Second), "container app runs again, 1s after it exited, with no back-off yet"},
		{Event{Component: Runtime, Event: KindBackOff, Pod: "default/web", Container: "app", Delay: 10 * time.Second, Reason: "CrashLoopBackOff", Func: "doBackOff"},
			"the restart of app is held back by the crash-loop back-off, now 10s (doBackOff)"},
		{ctr(KindStarted, 15*time.Second), "container app runs again, 12s after it exited, once the crash-loop back-off of 10s has run out"},
	} {
		if got := s.Tell(tt.e); got != tt.want {
			t.Errorf("Tell(%s at %v) = %q, want %q", tt.e.Event, tt.e.T, got, tt.want)
		}
	}
}

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 1500 * time.Millisecond: "1.5s", 150 * time.Second: "2m30s", 2 * time.Minute: "2m", time.Hour: "1h"} {
		if got := Human(d); got != want {
			t.Errorf("Human(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPodActions(t *testing.T) {
	for _, tt := range []struct {
		msg, want string
	}{
		{"kill sandbox(attempt=0) start=[app]", "create the pod's first sandbox, then start app"},
		{"kill sandbox(attempt=0) start=[app sidecar web]", "create the pod's first sandbox, then start app, sidecar and web"},
		{"kill sandbox(attempt=0) init=setup", "create the pod's first sandbox, then start the init container setup"},
		{"kill sandbox(attempt=2) start=[app]", "stop the pod and create a new sandbox, attempt 2, then start app"},
		{"killContainers=[app] start=[app]", "stop app, then start app"},
		{"kill", "stop every container and the sandbox"},
		{"resize=[app sidecar] start=[web]", "resize app and sidecar in place, then start web"},
		{"kill ephemeral=[debug]", ""},
		{"", ""},
	} {
		got, ok := podActions(tt.msg)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("podActions(%q) = %q, %v, want %q", tt.msg, got, ok, tt.want)
		}
	}
	e := Event{Component: Runtime, Event: KindSync, Message: "kill ephemeral=[debug]", Func: "SyncPod"}
	if got, want := NewStory().Tell(e), "SyncPod decides: kill ephemeral=[debug]"; got != want {
		t.Errorf("Tell(runtime sync %q) = %q, want %q: actions it has no words for, as the trace writes them", e.Message, got, want)
	}
}

// TestStoryTellsTwoDeletesApart narrates kubectl's graceful delete and the kubelet's delete with
// grace period 0 of one pod, and a mirror pod measured twice.
func TestStoryTellsTwoDeletesApart(t *testing.T) {
	const pod = "default/web-node-1"
	events := []Event{
		{Seq: 1, T: time.Second, Component: APIServer, Event: KindDeleting, Pod: pod, Func: "DELETE pods"},
		{Seq: 2, T: time.Second, Component: Mirror, Event: KindReconcile, Pod: pod, Reason: "MirrorPodDeleting", Func: "tryReconcileMirrorPods"},
		{Seq: 3, T: time.Second, Component: APIServer, Event: KindDeleting, Pod: pod, Func: "DELETE pods"},
		{Seq: 4, T: time.Second, Component: APIServer, Event: KindDelete, Pod: pod, Func: "DELETE pods"},
		{Seq: 5, T: time.Second, Component: PodManager, Event: KindAdd, Pod: pod, UID: "m2", Reason: "mirror", Func: "AddPod"},
		{Seq: 6, T: 2 * time.Second, Component: PodStartup, Event: KindMeasured, Pod: pod, UID: "m1", Message: "SLI 1s", Func: "ObservedPodOnWatch"},
		{Seq: 7, T: 3 * time.Second, Component: PodStartup, Event: KindMeasured, Pod: pod, UID: "m2", Message: "SLI 2s", Func: "ObservedPodOnWatch"},
	}
	s := NewStory().Trace(events).Paragraph()
	var got []string
	for _, e := range events {
		if c := s.Tell(e); c != "" {
			got = append(got, c)
		}
	}
	want := []string{
		"the API server marks default/web-node-1 for deletion, gracefully: it sets the deletionTimestamp and keeps the object",
		"the API server deletes default/web-node-1 with grace period 0: the object is gone",
		"the pod manager adds default/web-node-1 (AddPod)",
		"the pod startup latency tracker measures default/web-node-1's start: SLI 1s",
		"the pod startup latency tracker sees the new mirror pod of default/web-node-1 and measures it as a pod that just started: SLI 2s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the story's clauses mismatch (-want +got):\n%s", diff)
	}
}
