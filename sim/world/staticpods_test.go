package world

import (
	"errors"
	"io"
	"io/fs"
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

// TestStaticPodsReadsFollowChanges: the listing Glob keeps between changes, the file infos made
// at each write and the open files follow every change of the directory.
func TestStaticPodsReadsFollowChanges(t *testing.T) {
	d := NewStaticPods("/etc/kubernetes/manifests")
	path := func(n string) string { return "/etc/kubernetes/manifests/" + n }
	pattern := path("[^.]*")
	glob := func() []string {
		t.Helper()
		names, err := d.Glob(pattern)
		if err != nil {
			t.Fatalf("Glob(%q) error = %v", pattern, err)
		}
		return names
	}
	if got := glob(); got != nil {
		t.Errorf("Glob() of an empty directory = %q, want nil", got)
	}
	d.Write("b.yaml", []byte("b"))
	d.Write("a.yaml", []byte("a"))
	d.Write(".hidden", []byte("h"))
	if diff := cmp.Diff([]string{path("a.yaml"), path("b.yaml")}, glob()); diff != "" {
		t.Errorf("Glob() after two writes (-want +got):\n%s", diff)
	}
	// The answer is the caller's: changing it changes nothing of the next one.
	names := glob()
	names[0] = "changed"
	if diff := cmp.Diff([]string{path("a.yaml"), path("b.yaml")}, glob()); diff != "" {
		t.Errorf("Glob() after the caller changed its answer (-want +got):\n%s", diff)
	}
	if got, err := d.Glob(path("*.json")); err != nil || got != nil {
		t.Errorf("Glob(*.json) = %q, %v, want nil, nil", got, err)
	}

	// A file opened before a rewrite reads the content of the open; a Stat after it, the new size.
	f, err := d.Open(path("a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d.Write("a.yaml", []byte("a, longer"))
	if b, _ := io.ReadAll(f); string(b) != "a" {
		t.Errorf("a file opened before the rewrite reads %q, want a", b)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read() after Close() = %v, want %v", err, fs.ErrClosed)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("a second Close() = %v, want %v", err, fs.ErrClosed)
	}
	// Two files open at once read their own contents.
	fa, errA := d.Open(path("a.yaml"))
	fb, errB := d.Open(path("b.yaml"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	ba, _ := io.ReadAll(fa)
	bb, _ := io.ReadAll(fb)
	if string(ba) != "a, longer" || string(bb) != "b" {
		t.Errorf("two open files read %q and %q, want %q and %q", ba, bb, "a, longer", "b")
	}
	fa.Close()
	fb.Close()
	// A file closed twice, once the directory opened another: the second Close fails and the
	// other file stays open (a handle reused after its Close was closed by its first holder).
	first, err := d.Open(path("a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	next, err := d.Open(path("b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("a second Close() after another Open = %v, want %v", err, fs.ErrClosed)
	}
	if _, err := first.Read(make([]byte, 1)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read() of a closed file after another Open = %v, want %v", err, fs.ErrClosed)
	}
	if b, err := io.ReadAll(next); err != nil || string(b) != "b" {
		t.Errorf("the file opened after another's Close reads %q, %v, want %q", b, err, "b")
	}
	if err := next.Close(); err != nil {
		t.Errorf("Close() of the file opened after another's Close = %v", err)
	}
	if info, err := d.Stat(path("a.yaml")); err != nil || info.Size() != int64(len("a, longer")) || info.Name() != "a.yaml" || !info.Mode().IsRegular() {
		t.Errorf("Stat(a.yaml) after the rewrite = %v, %v, want a regular file a.yaml of %d bytes", info, err, len("a, longer"))
	}

	if _, err := d.Rename("a.yaml", "c.yaml"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{path("b.yaml"), path("c.yaml")}, glob()); diff != "" {
		t.Errorf("Glob() after a rename (-want +got):\n%s", diff)
	}
	if info, err := d.Stat(path("c.yaml")); err != nil || info.Name() != "c.yaml" || info.Size() != int64(len("a, longer")) {
		t.Errorf("Stat(c.yaml) after the rename = %v, %v, want c.yaml of %d bytes", info, err, len("a, longer"))
	}
	if _, err := d.Stat(path("a.yaml")); err == nil {
		t.Error("Stat(a.yaml) after the rename succeeded, want not found")
	}
	if _, err := d.Remove("b.yaml"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{path("c.yaml")}, glob()); diff != "" {
		t.Errorf("Glob() after a remove (-want +got):\n%s", diff)
	}
}
