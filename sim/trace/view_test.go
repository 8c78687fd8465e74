package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// echo is what one status write of the kubelet looks like in the trace, with a requeue, an
// unchanged file relist and a news event around it.
var echo = []Event{
	{Component: Status, Event: KindPatch, Pod: "default/web-n1", From: "Pending", To: "Running", Func: "syncPod"},
	{Component: APIServer, Event: KindStatus, Pod: "default/web-n1", Func: "PATCH pods/status"},
	{Component: Sources, Event: KindSet, Source: "api", Pods: []string{"default/web-n1"}, Func: "NewSourceApiserver"},
	{Component: Sources, Event: KindSet, Source: "api", Pods: []string{"default/web-n1"}, Func: "NewSourceApiserver"},
	{Component: PodConfig, Event: KindUpdate, Op: "RECONCILE", Source: "api", Pods: []string{"default/web-n1"}, Func: "podStorage.merge"},
	{Component: SyncLoop, Event: KindConfig, Op: "RECONCILE", Source: "api", Pods: []string{"default/web-n1"}, Func: "HandlePodReconcile"},
	{Component: PodManager, Event: KindUpdate, Pod: "default/web-n1", Reason: "mirror", Func: "UpdatePod"},
	{Component: PodWorkers, Event: KindRequeue, Pod: "default/web-n1", Func: "completeWork"},
	{Component: Sources, Event: KindSet, Source: "file", Pods: []string{"default/web-n1", "kube-system/etcd-n1"}, Func: "listConfig"},
	{Component: SyncLoop, Event: KindConfig, Op: "DELETE", Source: "api", Pods: []string{"default/web-n1"}, Func: "HandlePodUpdates"},
	{Component: PodManager, Event: KindUpdate, Pod: "default/web-n1", Reason: "mirror", Func: "UpdatePod"},
	{Component: Runtime, Event: KindStarted, Pod: "kube-system/etcd-n1", Container: "etcd", Func: "startContainer"},
	{Component: Runtime, Event: KindFailed, Pod: "kube-system/etcd-n1", Reason: "ErrImagePull", Func: "EnsureImageExists"},
}

func TestView(t *testing.T) {
	tests := []struct {
		name string
		opts ViewOptions
		want []int // indices into echo
	}{
		{name: "everything", opts: ViewOptions{Level: LevelPipeline}, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{name: "zero options", opts: ViewOptions{}, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		// The second api SET repeats the first; the pod manager's update after a DELETE is news.
		{name: "quiet", opts: ViewOptions{Level: LevelPipeline, Quiet: true}, want: []int{0, 2, 8, 9, 10, 11, 12}},
		{name: "one pod by name", opts: ViewOptions{Level: LevelPipeline, Pods: []string{"etcd-n1"}}, want: nil},
		{name: "one pod", opts: ViewOptions{Level: LevelPipeline, Pods: []string{"kube-system/etcd-n1"}}, want: []int{8, 11, 12}},
		{name: "default namespace", opts: ViewOptions{Level: LevelPipeline, Quiet: true, Pods: []string{"web-n1"}}, want: []int{0, 2, 8, 9, 10}},
		{name: "components", opts: ViewOptions{Level: LevelPipeline, Components: []Component{Runtime, Status}}, want: []int{0, 11, 12}},
		{name: "lifecycle", opts: ViewOptions{Level: LevelLifecycle}, want: []int{0, 4, 11, 12}},
		{name: "problems", opts: ViewOptions{Level: LevelProblems}, want: []int{12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewView(tt.opts)
			var got []int
			for i, e := range echo {
				if v.Show(e) {
					got = append(got, i)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("shown events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecorderViewFiltersOutputOnly checks that a view chooses what is written but not what is
// kept: replay's expectations and golden files see every event.
func TestRecorderViewFiltersOutputOnly(t *testing.T) {
	var out bytes.Buffer
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Out: &out, Format: Text, Keep: true,
		View: NewView(ViewOptions{Level: LevelPipeline, Quiet: true})})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range echo {
		r.Emit(e)
	}
	if got := len(r.Events()); got != len(echo) {
		t.Errorf("len(Events()) = %d, want %d", got, len(echo))
	}
	if got := strings.Count(out.String(), "\n"); got != 7 {
		t.Errorf("lines written = %d, want 7:\n%s", got, out.String())
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range []Level{LevelProblems, LevelLifecycle, LevelPipeline} {
		if got, err := ParseLevel(l.String()); err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v, want %v", l.String(), got, err, l)
		}
	}
	if got, err := ParseLevel("1"); err != nil || got != LevelLifecycle {
		t.Errorf("ParseLevel(\"1\") = %v, %v, want lifecycle", got, err)
	}
	for _, bad := range []string{"", "3", "debug", "-1"} {
		if _, err := ParseLevel(bad); err == nil {
			t.Errorf("ParseLevel(%q) error = nil, want an error", bad)
		}
	}
}
