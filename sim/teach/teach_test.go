package teach

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func TestFuncURL(t *testing.T) {
	for _, tt := range []struct {
		component trace.Component
		fn, want  string
	}{
		{trace.PodWorkers, "SyncPod", sourceBase + "pkg/kubelet/kubelet.go#L1941"},
		{trace.Runtime, "SyncPod", sourceBase + "pkg/kubelet/kuberuntime/kuberuntime_manager.go#L1394"},
		{trace.PLEG, "relist", sourceBase + "pkg/kubelet/pleg/generic.go#L234"},
		{trace.APIServer, "POST pods", ""},
	} {
		if got := FuncURL(tt.component, tt.fn); got != tt.want {
			t.Errorf("FuncURL(%s, %s) = %q, want %q", tt.component, tt.fn, got, tt.want)
		}
	}
}

// TestReportDeterministic writes the report of one scenario twice: the bytes must be the same,
// as the trace is.
func TestReportDeterministic(t *testing.T) {
	var pages [2][]byte
	for i := range pages {
		s, _, err := LoadScenario("../../scenarios/static-pod-edit.yaml", replay.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteHTML(&b, NewTimeline(s, res)); err != nil {
			t.Fatal(err)
		}
		pages[i] = b.Bytes()
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Error("two replays of static-pod-edit wrote different reports")
	}
	page := string(pages[0])
	for _, want := range []string{`"name":"static-pod-edit"`, `"diffs":{`, `kuberuntime_manager.go#L1394`, `id="canvas"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	// Nothing is fetched: the page is one file.
	for _, bad := range []string{"<script src", "<link ", "@import", "http://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the report refers to an outside resource: %q", bad)
		}
	}
}

func TestLiveStreamsBacklogThenNewEvents(t *testing.T) {
	live := NewLive("node-1", 0)
	live.Emit(trace.Event{Seq: 1, Component: trace.Sources, Event: trace.KindSet, Source: "file", Func: "listConfig"})
	srv := httptest.NewServer(live)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	r := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("read the stream: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				return strings.TrimSpace(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	if got, want := next(), `"funcURL":"`+sourceBase+`pkg/kubelet/config/file.go#L121"`; !strings.Contains(got, want) || !strings.Contains(got, `"seq":1`) {
		t.Errorf("first event %s, want seq 1 with %s", got, want)
	}
	live.Emit(trace.Event{Seq: 2, Cause: 1, Component: trace.PodConfig, Event: trace.KindUpdate, Op: "ADD"})
	if got := next(); !strings.Contains(got, `"seq":2,"cause":1`) {
		t.Errorf("second event %s, want seq 2 caused by 1", got)
	}
	live.Close()
	if _, err := r.ReadString('\n'); err == nil {
		// The blank line after the last event may come first.
		if _, err := r.ReadString('\n'); err == nil {
			t.Error("the stream goes on after Close")
		}
	}

	page, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(page.Body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body.String(), `"live":true`) {
		t.Error("the live page does not say it is live")
	}
}

func TestLoadCurriculum(t *testing.T) {
	c, err := LoadCurriculum(os.DirFS("../../scenarios"), "../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Lessons) < 7 {
		t.Errorf("%d lessons, want the seven of the issue and more", len(c.Lessons))
	}
	var out bytes.Buffer
	if err := c.WriteList(&out); err != nil {
		t.Fatal(err)
	}
	// The start-up comes first: the kubelet does it before any pod.
	if !strings.Contains(out.String(), "Lesson 1: The kubelet's start-up (start-up)") || !strings.Contains(out.String(), "Lesson 2: Static pods (static-pods)") {
		t.Errorf("the list does not start with the start-up and the static pods lessons:\n%s", out.String())
	}

	for _, tt := range []struct {
		name, index string
	}{
		{"unknown scenario", "lessons:\n- {name: a, title: A, description: d, scenarios: [missing]}\n"},
		{"no description", "lessons:\n- {name: a, title: A, scenarios: [one]}\n"},
		{"same name twice", "lessons:\n- {name: a, title: A, description: d, scenarios: [one]}\n- {name: a, title: B, description: d, scenarios: [one]}\n"},
		{"unknown field", "lessons:\n- {name: a, title: A, description: d, scenarios: [one], extra: 1}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "lessons"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "one.yaml"), []byte("name: one\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, IndexPath), []byte(tt.index), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCurriculum(os.DirFS(dir), dir); !errors.Is(err, ErrBadIndex) {
				t.Errorf("LoadCurriculum() = %v, want %v", err, ErrBadIndex)
			}
		})
	}
}

// TestTimelineSteps checks that the timeline carries each step with its event and verdict, a
// failed expectation as failed.
func TestTimelineSteps(t *testing.T) {
	const file = `name: failing
sources: [file]
steps:
- at: 1s
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec:
        containers:
        - {name: nginx, image: nginx:1.27}
- at: 10s
  expect: {pod: default/web-node-1, phase: Running}
- at: 10s
  expect: {pod: default/web-node-1, phase: Failed}
`
	s, err := replay.Parse("failing.yaml", []byte(file), replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	tl := NewTimeline(s, res)
	if len(tl.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(tl.Steps))
	}
	write, ok, failed := tl.Steps[0], tl.Steps[1], tl.Steps[2]
	if write.Action != "writeManifest" || write.Seq == 0 || write.Met != nil {
		t.Errorf("step 1 = %+v, want the writeManifest with its event and no verdict", write)
	}
	if ok.Met == nil || !*ok.Met || failed.Met == nil || *failed.Met || failed.Seen == "" {
		t.Errorf("steps 2 and 3 = %+v, %+v, want met, then failed with what was seen", ok, failed)
	}
	if e := tl.Events[write.Seq-1]; tl.Strings[e[3].(int)] != "scenario" {
		t.Errorf("step 1's event is %v, want the scenario's", e)
	}
}

// TestTimelineNotReached checks that an expectation after the replay stopped has no verdict.
func TestTimelineNotReached(t *testing.T) {
	s, err := replay.Load("../../scenarios/crash-loop.yaml", replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{KeepEvents: true, Until: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	last := NewTimeline(s, res).Steps[len(s.Steps)-1]
	if last.Met != nil || last.What == "" {
		t.Errorf("the last step = %+v, want it described, with no verdict", last)
	}
}

// TestLoadScenario resolves the names a command line may give a scenario: a file, else a
// built-in scenario by name.
func TestLoadScenario(t *testing.T) {
	file := filepath.Join(t.TempDir(), "crash-loop.yaml")
	if err := os.WriteFile(file, []byte("name: mine\nsources: [file]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		arg     string
		name    string
		builtin bool
		err     string
	}{
		{arg: "crash-loop", name: "crash-loop", builtin: true},
		{arg: "crash-loop.yaml", name: "crash-loop", builtin: true},
		{arg: "scenarios/crash-loop.yaml", name: "crash-loop", builtin: true},
		{arg: "../../scenarios/crash-loop.yaml", name: "crash-loop"},
		{arg: file, name: "mine"},
		{arg: "other/crash-loop.yaml", err: "no built-in scenario is named other/crash-loop.yaml"},
		{arg: "no-such", err: "no built-in scenario is named no-such"},
	} {
		t.Run(strings.ReplaceAll(tt.arg, "/", "_"), func(t *testing.T) {
			s, builtin, err := LoadScenario(tt.arg, replay.LoadOptions{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, replay.ErrInvalid) {
					t.Errorf("LoadScenario(%q) error = %v, want an invalid scenario error with %q", tt.arg, err, tt.err)
				}
				return
			}
			if err != nil || s.Name != tt.name || builtin != tt.builtin {
				t.Errorf("LoadScenario(%q) = %v, %v, %v, want scenario %s, built in %v", tt.arg, s, builtin, err, tt.name, tt.builtin)
			}
		})
	}
	if b, err := ReadGolden("scenarios/crash-loop.golden"); err != nil || len(b) == 0 {
		t.Errorf("ReadGolden(scenarios/crash-loop.golden) = %d bytes, %v, want the built-in golden", len(b), err)
	}
	if _, err := ReadGolden("no-such.golden"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadGolden(no-such.golden) error = %v, want not exist", err)
	}
}

// TestBuiltinCurriculum loads the curriculum built into the binary, every scenario of it.
func TestBuiltinCurriculum(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := LoadCurriculum(os.DirFS("../../scenarios"), "../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Lessons) != len(disk.Lessons) || len(c.Other) != len(disk.Other) {
		t.Errorf("built-in curriculum: %d lessons and %d other scenarios, want %d and %d as on disk", len(c.Lessons), len(c.Other), len(disk.Lessons), len(disk.Other))
	}
	for _, l := range c.Lessons {
		for _, name := range l.Scenarios {
			if _, err := c.Load(name); err != nil {
				t.Errorf("lesson %s: %v", l.Name, err)
			}
		}
	}
}

// TestGlossary checks the built-in glossary: it parses, it defines every trace component (the
// timeline's lanes), every pod worker state and every PodConfig operation, and it expands an
// abbreviation once per output.
func TestGlossary(t *testing.T) {
	g, err := BuiltinGlossary()
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"sync", "terminating", "terminated", "finished", "ADD", "UPDATE", "DELETE", "REMOVE", "RECONCILE",
		"SyncPod", "mirror pod", "static pod", "admission", "QoS", "housekeeping", "CrashLoopBackOff", "backoff"}
	for _, c := range trace.Components {
		words = append(words, string(c))
	}
	for _, w := range words {
		if _, ok := g.Find(w); !ok {
			t.Errorf("Find(%q) = false, want the glossary to define it", w)
		}
	}
	if tm, _ := g.Find("set"); tm.Term != "sources" {
		t.Errorf("Find(set) = %q, want sources: the case of a word counts first", tm.Term)
	}
	if tm, _ := g.Find("pleg"); tm.Term != "PLEG" {
		t.Errorf("Find(pleg) = %q, want PLEG", tm.Term)
	}
	var out bytes.Buffer
	if err := g.Write(&out, "PLEG", "no-such-word"); err == nil || !strings.Contains(err.Error(), "no-such-word") {
		t.Errorf("Write(PLEG, no-such-word) = %v, want an error naming no-such-word", err)
	}
	if err := g.Write(&out, "PLEG"); err != nil || !strings.HasPrefix(out.String(), "PLEG (Pod Lifecycle Event Generator)\n  ") {
		t.Errorf("Write(PLEG) = %v:\n%s", err, out.String())
	}

	x := NewExpander(g)
	for _, tt := range []struct{ in, want string }{
		{"GenericPLEG.Relist, then the PLEG's relist", "GenericPLEG.Relist, then the Pod Lifecycle Event Generator (PLEG)'s relist"},
		{"the PLEG again, and the CRI", "the PLEG again, and the Container Runtime Interface (CRI)"},
	} {
		if got := x.Expand(tt.in); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}

	for _, bad := range []string{
		"terms:\n- {term: a}\n",
		"terms:\n- {term: a, definition: x, links: [w]}\n- {term: b, definition: y, links: [w]}\n",
		"terms:\n- {term: a, definition: x, extra: 1}\n",
	} {
		if _, err := ParseGlossary([]byte(bad)); !errors.Is(err, ErrBadGlossary) {
			t.Errorf("ParseGlossary(%q) = %v, want %v", bad, err, ErrBadGlossary)
		}
	}
}
