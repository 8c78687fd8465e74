package sources

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podvalidation"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

func TestExtractFromBadDataFile(t *testing.T) {
	path := join(t.TempDir(), "test_pod_config")
	writeFile(t, path, "\x01\x02\x03")
	f, _, _ := newTestFile(t, path)
	u, err := f.Relist()
	if err == nil || u != nil {
		t.Errorf("Relist() = %v, %v, want no update and an error", u, err)
	}
	if !errors.Is(err, ErrUnparsable) || !strings.HasPrefix(err.Error(), path+": couldn't parse as pod(") {
		t.Errorf("Relist() error = %q, want it to name %s and say it couldn't parse", err, path)
	}
}

func TestExtractFromEmptyDir(t *testing.T) {
	f, _, ev := newTestFile(t, t.TempDir())
	u, err := f.Relist()
	if err != nil {
		t.Fatalf("Relist() error = %v, want nil", err)
	}
	want := &podconfig.Update{Pods: []*v1.Pod{}, Op: podconfig.SET, Source: podconfig.FileSource}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("Relist() mismatch (-want +got):\n%s", diff)
	}
	wantEv := []trace.Event{{Component: trace.Sources, Event: "set", Source: "file", Pods: []string{}, Func: "listConfig"}}
	if diff := cmp.Diff(wantEv, ev.take()); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

// simplePodFixture is the "Simple pod" the kubelet's file_linux_test writes to disk.
func simplePodFixture() *v1.Pod {
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "test", UID: "12345", Namespace: "mynamespace"},
		Spec: v1.PodSpec{
			Containers:      []v1.Container{{Name: "image", Image: "test/image", SecurityContext: containerSecurityContext()}},
			SecurityContext: &v1.PodSecurityContext{},
			SchedulerName:   v1.DefaultSchedulerName,
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

func TestReadPodsFromFileExistAlready(t *testing.T) {
	path := join(t.TempDir(), "test_pod_manifest")
	writeFile(t, path, string(mustJSON(t, simplePodFixture())))
	clk := vclock.New(vclock.Epoch)
	f := newFile(t, FileOptions{Path: path, NodeName: "random-test-hostname", Clock: clk, Tracer: trace.Discard})
	u, err := f.Relist()
	if err != nil {
		t.Fatal(err)
	}
	grace := int64(30)
	links := true
	want := &podconfig.Update{Op: podconfig.SET, Source: podconfig.FileSource, Pods: []*v1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: "test-random-test-hostname", UID: "12345", Namespace: "mynamespace",
			Annotations: map[string]string{kubecontainer.ConfigHashAnnotationKey: "12345"}},
		Spec: v1.PodSpec{
			NodeName: "random-test-hostname", RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []v1.Toleration{{Operator: "Exists", Effect: "NoExecute"}},
			Containers: []v1.Container{{Name: "image", Image: "test/image", TerminationMessagePath: "/dev/termination-log",
				ImagePullPolicy: v1.PullAlways, SecurityContext: containerSecurityContext(), TerminationMessagePolicy: v1.TerminationMessageReadFile}},
			SecurityContext: &v1.PodSecurityContext{}, SchedulerName: v1.DefaultSchedulerName, EnableServiceLinks: &links,
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("Relist() mismatch (-want +got):\n%s", diff)
	}
	for _, p := range u.Pods {
		if errs := podvalidation.ValidatePodCreate(p, podvalidation.StaticPod); len(errs) > 0 {
			t.Errorf("received pod fails validation: %v", errs)
		}
	}
}

func TestExtractFromNonExistentFile(t *testing.T) {
	path := join(t.TempDir(), "some", "fake", "file")
	f, _, ev := newTestFile(t, path)
	empty := &podconfig.Update{Pods: []*v1.Pod{}, Op: podconfig.SET, Source: podconfig.FileSource}
	for _, tc := range []struct {
		name string
		call func() (*podconfig.Update, error)
		fn   string
	}{
		{"CheckWatchPath", f.CheckWatchPath, "doWatch"},
		{"Relist", f.Relist, "listConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := tc.call()
			if !errors.Is(err, ErrPathNotExist) {
				t.Errorf("%s() error = %v, want ErrPathNotExist", tc.name, err)
			}
			if diff := cmp.Diff(empty, u); diff != "" {
				t.Errorf("%s() update mismatch (-want +got):\n%s", tc.name, diff)
			}
			want := []trace.Event{
				{Component: trace.Sources, Event: "set", Source: "file", Pods: []string{}, Func: tc.fn},
				{Component: trace.Sources, Event: "error", Source: "file", Reason: "PathMissing", Message: path + ": path does not exist, ignoring", Func: tc.fn},
			}
			if diff := cmp.Diff(want, ev.take()); diff != "" {
				t.Errorf("trace mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDirectoryLifecycle walks a manifest directory through the changes an operator makes and
// checks every SET, as podconfig would receive it.
func TestDirectoryLifecycle(t *testing.T) {
	dir := t.TempDir()
	f, _, ev := newTestFile(t, dir)
	step := func(name string, wantErr bool, want ...string) func(*podconfig.Update, error) *podconfig.Update {
		return func(u *podconfig.Update, err error) *podconfig.Update {
			t.Helper()
			if (err != nil) != wantErr {
				t.Errorf("%s: error = %v, want error %v", name, err, wantErr)
			}
			if want == nil && u != nil {
				t.Errorf("%s: update = %v, want none", name, names(u))
			}
			if want != nil {
				if u == nil {
					t.Fatalf("%s: no update, want SET %v", name, want)
				}
				if diff := cmp.Diff(want, names(u)); diff != "" {
					t.Errorf("%s: SET mismatch (-want +got):\n%s", name, diff)
				}
			}
			return u
		}
	}
	web := join(dir, "web.yaml")

	// Create.
	writeFile(t, web, podYAML("web", "web", ""))
	u1 := step("create", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: web, Op: WatchAdd}))

	// Edit: a new UID, so podconfig sees REMOVE of the old one and ADD of the new one.
	writeFile(t, web, podYAML("web", "web", "  labels: {tier: front}\n"))
	u2 := step("edit", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: web, Op: WatchModify}))
	if a, b := uids(u1)["default/web-node1"], uids(u2)["default/web-node1"]; a == b {
		t.Errorf("UID after edit = %q, want a new UID", b)
	}

	// Pinned UID: edits keep it, so podconfig sees UPDATE.
	writeFile(t, web, podYAML("web", "web", "  uid: web-uid\n"))
	u3 := step("pin", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: web, Op: WatchModify}))
	writeFile(t, web, podYAML("web", "web", "  uid: web-uid\n  labels: {tier: back}\n"))
	u4 := step("pinned edit", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: web, Op: WatchModify}))
	if a, b := uids(u3)["default/web-node1"], uids(u4)["default/web-node1"]; a != "web-uid" || b != "web-uid" {
		t.Errorf("pinned UIDs = %q, %q, want web-uid twice", a, b)
	}
	writeFile(t, web, podYAML("web", "web", ""))
	u5 := step("unpin", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: web, Op: WatchModify}))

	// Rename: the move out deletes, the move in adds with a UID that hashes the new path.
	moved := join(dir, "web2.yaml")
	if err := os.Rename(web, moved); err != nil {
		t.Fatal(err)
	}
	step("rename out", false, []string{}...)(f.HandleEvent(WatchEvent{Path: web, Op: WatchDelete}))
	u6 := step("rename in", false, "default/web-node1")(f.HandleEvent(WatchEvent{Path: moved, Op: WatchAdd}))
	if a, b := uids(u5)["default/web-node1"], uids(u6)["default/web-node1"]; a == b {
		t.Errorf("UID after rename = %q, want a new UID", b)
	}

	// Dotfiles are ignored by the watch and the relist.
	dot := join(dir, ".db.yaml")
	writeFile(t, dot, podYAML("db", "db", ""))
	step("dotfile event", false)(f.HandleEvent(WatchEvent{Path: dot, Op: WatchAdd}))

	// A backup file is a manifest like any other; a broken file beside good ones is reported and
	// skipped; a sub-directory is skipped.
	writeFile(t, join(dir, "cache.yaml~"), podYAML("cache", "cache", ""))
	broken := join(dir, "broken.yaml")
	writeFile(t, broken, podYAML("broken", "Web", ""))
	if err := os.Mkdir(join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(dir, "sub", "x.yaml"), podYAML("x", "x", ""))
	ev.take()
	u, err := f.Relist()
	step("relist", true, "default/cache-node1", "default/web-node1")(u, err)
	wantMsg := broken + `: invalid pod: [spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label`
	if err == nil || !strings.HasPrefix(err.Error(), wantMsg) || !errors.Is(err, staticpod.ErrInvalidPod) {
		t.Errorf("Relist() error = %v, want one starting %q", err, wantMsg)
	}
	got := ev.take()
	if len(got) != 2 || got[0].Reason != "InvalidManifest" || got[0].Func != "extractFromDir" || got[0].Message != err.Error() ||
		got[1].Event != "set" || got[1].Func != "listConfig" {
		t.Errorf("relist trace = %+v, want one InvalidManifest error then the set", got)
	}

	// Delete.
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	step("delete", false, "default/cache-node1")(f.HandleEvent(WatchEvent{Path: moved, Op: WatchDelete}))
	// A delete for a path never read changes nothing.
	step("delete unknown", false)(f.HandleEvent(WatchEvent{Path: join(dir, "nothing"), Op: WatchDelete}))
}
