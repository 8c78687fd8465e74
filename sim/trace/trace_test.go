package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestJSONContract(t *testing.T) {
	tests := []struct {
		name  string
		event Event
		want  string
	}{
		{
			name:  "minimal",
			event: Event{T: 1500 * time.Millisecond, Component: PodConfig, Event: "update"},
			want:  `{"t":1.5,"component":"podconfig","event":"update"}`,
		},
		{
			name: "update with pods",
			event: Event{Component: PodConfig, Event: "update", Op: "ADD", Source: "file",
				Pods: []string{"default/a-n1", "kube-system/b-n1"}, Func: "podStorage.merge"},
			want: `{"t":0,"component":"podconfig","event":"update","op":"ADD","source":"file","pods":["default/a-n1","kube-system/b-n1"],"func":"podStorage.merge","file":"pkg/kubelet/config/config.go"}`,
		},
		{
			name:  "empty pod list is kept",
			event: Event{Component: PodConfig, Event: "update", Op: "ADD", Source: "file", Pods: []string{}},
			want:  `{"t":0,"component":"podconfig","event":"update","op":"ADD","source":"file","pods":[]}`,
		},
		{
			name: "every field",
			event: Event{T: 2 * time.Second, Component: Runtime, Event: "exited", Pod: "default/a", UID: "u1",
				Op: "kill", Source: "api", From: "running", To: "exited", Container: "c", ExitCode: Int(0),
				Delay: 10 * time.Second, Reason: "Completed", Message: "said \"bye\"", Func: "killContainer", Seq: 7, Cause: 3},
			want: `{"t":2,"component":"runtime","event":"exited","pod":"default/a","uid":"u1","op":"kill","source":"api","from":"running","to":"exited","container":"c","exitCode":0,"delay":10,"reason":"Completed","message":"said \"bye\"","func":"kubeGenericRuntimeManager.killContainer","file":"pkg/kubelet/kuberuntime/kuberuntime_container.go","seq":7,"cause":3}`,
		},
		{
			name:  "a root has a seq and no cause",
			event: Event{Component: Scenario, Event: KindWriteManifest, Seq: 1},
			want:  `{"t":0,"component":"scenario","event":"writeManifest","seq":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.event.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON() error = %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON() = %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("MarshalJSON() = %s, not valid JSON", got)
			}
		})
	}
}

func TestTextIsAligned(t *testing.T) {
	a := Event{T: time.Second, Component: PodConfig, Event: "update", Op: "ADD", Source: "file",
		Pods: []string{"default/a-n1"}, Func: "podStorage.merge"}
	b := Event{T: 125 * time.Second, Component: PodWorkers, Event: "state", Pod: "default/a-n1", UID: "0123456789",
		From: "sync", To: "terminating", Func: "UpdatePod"}
	la, lb := a.Text(), b.Text()
	for _, l := range []string{la, lb} {
		if utf8.RuneCountInString(l) != LineWidth {
			t.Errorf("Text() = %q, want the function to end at column %d", l, LineWidth)
		}
	}
	want := "    1.000s podconfig     -                        update op=ADD source=file pods=[a-n1]"
	if !strings.HasPrefix(la, want) {
		t.Errorf("Text() = %q, want prefix %q", la, want)
	}
	if strings.Contains(lb, "uid=") {
		t.Errorf("Text() = %q, want no UID", lb)
	}
	if got := b.TextWith(TextOptions{UID: true}); !strings.Contains(got, " uid=01234567 ") {
		t.Errorf("TextWith(UID) = %q, want uid=01234567", got)
	}
}

// TestTextNeverCuts renders long events: every line stays within LineWidth columns, and every
// field and every character of the message is on one of them. The function ends the line it
// fits on, shortened when only its short name fits.
func TestTextNeverCuts(t *testing.T) {
	for _, tt := range []struct {
		name string
		e    Event
		fn   string // what ends the event's last line; "" for no function
	}{
		{"long message", Event{T: 123456 * time.Second, Component: PluginManager, Event: KindError, Reason: "NotifyRegistrationStatus",
			Message: strings.Repeat("a long error é ", 20), Func: "GetInfo"}, ""},
		{"long pod", Event{Component: Runtime, Event: KindKilling, Pod: "kube-system/a-very-long-static-pod-name-on-node-1", Container: "c",
			Delay: 30 * time.Second, Message: "sandbox changed", Func: "createPodSandbox"}, "kubeGenericRuntimeManager.createPodSandbox"},
		{"long word", Event{Component: Runtime, Event: KindDown, Delay: time.Minute, Message: strings.Repeat("x", 200)}, ""},
		{"short name", Event{Component: Runtime, Event: KindSync, Pod: "default/crashloop-node-1", Message: "kill sandbox(attempt=0) start=[worker]",
			Func: "SyncPod"}, " SyncPod"},
		{"no function", Event{Component: Sources, Event: KindError, Source: "file", Reason: "UnparsableManifest",
			Message: `/etc/kubernetes/manifests/bad.yaml: error converting YAML to JSON: yaml: line 3: mapping values are not allowed in this context`,
			Func:    "extractFromDir"}, ""},
		{"pods", Event{Component: PodConfig, Event: KindUpdate, Op: "ADD", Source: "file",
			Pods: []string{"default/crashloop-node-1", "default/init-demo-node-1", "kube-system/kube-scheduler-node-1", "default/web-node-1"},
			Func: "podStorage.merge"}, "podStorage.merge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.e.Text()
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				if n := utf8.RuneCountInString(l); n > LineWidth {
					t.Errorf("line %d of Text() = %q: %d columns, want at most %d", i+1, l, n, LineWidth)
				}
				if i > 0 && !strings.HasPrefix(l, strings.Repeat(" ", bodyColumn)) {
					t.Errorf("continuation line %q, want it to start with %d spaces", l, bodyColumn)
				}
			}
			if strings.Contains(text, "…") {
				t.Errorf("Text() = %q, want nothing cut", text)
			}
			flat := strings.Join(strings.Fields(text), "")
			for _, item := range tt.e.bodyItems(TextOptions{}) {
				if !strings.Contains(flat, strings.Join(strings.Fields(item), "")) {
					t.Errorf("Text() = %q, want %q in it", text, item)
				}
			}
			last := lines[len(lines)-1]
			if tt.fn != "" && (!strings.HasSuffix(last, tt.fn) || utf8.RuneCountInString(last) != LineWidth) {
				t.Errorf("Text() ends with %q, want %q at column %d", last, tt.fn, LineWidth)
			}
			wide := tt.e.TextWith(TextOptions{Wide: true})
			if strings.Contains(wide, "\n") || !strings.Contains(wide, strings.Join(tt.e.bodyItems(TextOptions{}), " ")) ||
				!strings.HasSuffix(wide, tt.e.Where().Func) {
				t.Errorf("TextWith(Wide) = %q, want one line with the whole body and %q", wide, tt.e.Where().Func)
			}
		})
	}
}

func TestTextRoundsDurations(t *testing.T) {
	got := Event{Component: PodWorkers, Event: KindRequeue, Pod: "default/a", Delay: 71412345678 * time.Nanosecond, Func: "completeWork"}.Text()
	if !strings.Contains(got, " delay=1m11.412s ") {
		t.Errorf("Text() = %q, want delay=1m11.412s", got)
	}
}

func TestTextSummarisesLongPodLists(t *testing.T) {
	var pods []string
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		pods = append(pods, "default/"+p)
	}
	pods[1] = "kube-system/b"
	got := Event{Component: PodConfig, Event: "update", Pods: pods}.Text()
	if !strings.Contains(got, "pods=[a kube-system/b c +5]") {
		t.Errorf("Text() = %q, want the first 3 of 8 pods and the count of the others", got)
	}
}

func TestRecorderStampsAndWrites(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var out bytes.Buffer
	r, err := NewRecorder(RecorderOptions{Clock: clk, Out: &out, Format: JSON, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Emit(Event{Component: Sources, Event: "set", Source: "file", T: time.Hour})
	clk.Advance(2500 * time.Millisecond)
	r.Emit(Event{Component: PodConfig, Event: "update", Op: "ADD", Source: "file"})

	want := `{"t":0,"component":"sources","event":"set","source":"file","seq":1}` + "\n" +
		`{"t":2.5,"component":"podconfig","event":"update","op":"ADD","source":"file","seq":2,"cause":1}` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
	if got := r.Events(); len(got) != 2 || got[1].T != 2500*time.Millisecond {
		t.Errorf("Events() = %+v, want two events, the second at 2.5s", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{Text, JSON} {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v, want %v", f.String(), got, err, f)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("ParseFormat(\"yaml\") succeeded, want an error")
	}
	if got := Format(7).String(); got != "Format(7)" {
		t.Errorf("Format(7).String() = %q", got)
	}
}

func TestRecorderEventsSince(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		r.Emit(Event{Component: Scenario, Event: Kind(name)})
	}
	if r.Len() != 3 {
		t.Errorf("Len() = %d, want 3", r.Len())
	}
	var got []string
	for _, e := range r.EventsSince(1) {
		got = append(got, string(e.Event))
	}
	if diff := cmp.Diff([]string{"b", "c"}, got); diff != "" {
		t.Errorf("EventsSince(1) mismatch (-want +got):\n%s", diff)
	}
	if got := r.EventsSince(3); got != nil {
		t.Errorf("EventsSince(3) = %v, want nil", got)
	}
}

// failingWriter accepts n writes, then fails every later one.
type failingWriter struct {
	n      int
	writes []string
}

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(w.writes) >= w.n {
		return 0, errDiskFull
	}
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestRecorderStopsWritingAfterAnError(t *testing.T) {
	w := &failingWriter{n: 1}
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Out: w, Format: Text, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err() before any write = %v, want nil", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		r.Emit(Event{Component: Scenario, Event: Kind(name)})
	}
	want := []string{Event{Component: Scenario, Event: "a"}.Text() + "\n"}
	if diff := cmp.Diff(want, w.writes); diff != "" {
		t.Errorf("lines written mismatch (-want +got):\n%s", diff)
	}
	if err := r.Err(); !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "write trace: ") {
		t.Errorf("Err() = %v, want the first write error wrapped as \"write trace: ...\"", err)
	}
	if got := r.Len(); got != 3 {
		t.Errorf("Len() = %d, want 3: a write error does not stop keeping events", got)
	}
}
