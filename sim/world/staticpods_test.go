package world

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sources"
)

// TestStaticPodsEvents: each change returns the events inotify would deliver, and the directory
// reads back what was written.
func TestStaticPodsEvents(t *testing.T) {
	d := NewStaticPods("/etc/kubernetes/manifests")
	path := func(n string) string { return "/etc/kubernetes/manifests/" + n }
	var got [][]sources.WatchEvent
	got = append(got, d.Write("a.yaml", []byte("a")))
	got = append(got, d.Write("a.yaml", []byte("a2")))
	evs, err := d.Rename("a.yaml", "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, evs)
	if evs, err = d.Remove("b.yaml"); err != nil {
		t.Fatal(err)
	}
	got = append(got, evs)
	want := [][]sources.WatchEvent{
		{{Path: path("a.yaml"), Op: sources.WatchAdd}, {Path: path("a.yaml"), Op: sources.WatchModify}},
		{{Path: path("a.yaml"), Op: sources.WatchModify}},
		{{Path: path("a.yaml"), Op: sources.WatchDelete}, {Path: path("b.yaml"), Op: sources.WatchAdd}},
		{{Path: path("b.yaml"), Op: sources.WatchDelete}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if _, err := d.Remove("b.yaml"); err == nil || err.Error() != path("b.yaml")+": no such file" {
		t.Errorf("Remove of a missing file = %v, want no such file", err)
	}
	d.Write("c.yaml", []byte("c"))
	f, err := d.Open(path("c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(f); string(b) != "c" {
		t.Errorf("Open(c.yaml) reads %q, want c", b)
	}
	if names, _ := d.Glob(path("*.yaml")); !cmp.Equal(names, []string{path("c.yaml")}) {
		t.Errorf("Glob() = %v", names)
	}
	if info, err := d.Stat(d.Dir()); err != nil || !info.IsDir() {
		t.Errorf("Stat(dir) = %v, %v, want a directory", info, err)
	}
}
