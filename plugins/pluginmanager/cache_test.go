package pluginmanager

import (
	"errors"
	"testing"
	"time"
)

func TestDesiredStateAddOrUpdate(t *testing.T) {
	now := time.Unix(100, 0)
	d := &DesiredState{now: func() time.Time { return now }, newID: counter(), byPath: map[string]PluginInfo{}}
	if _, err := d.AddOrUpdatePlugin(""); !errors.Is(err, ErrEmptySocketPath) {
		t.Fatalf("empty path: err = %v, want ErrEmptySocketPath", err)
	}
	firstID, err := d.AddOrUpdatePlugin("/r/a.sock")
	if err != nil {
		t.Fatal(err)
	}
	first := d.GetPluginsToRegister()[0]
	now = now.Add(time.Second)
	secondID, err := d.AddOrUpdatePlugin("/r/a.sock")
	if err != nil {
		t.Fatal(err)
	}
	got := d.GetPluginsToRegister()
	if len(got) != 1 || got[0].ID != secondID || first.ID != firstID || firstID == secondID || !got[0].Timestamp.After(first.Timestamp) {
		t.Fatalf("after re-add: %+v (first %+v): want one entry with a new id and timestamp", got, first)
	}
	d.RemovePlugin("/r/a.sock")
	d.RemovePlugin("/r/unknown.sock")
	if d.PluginExists("/r/a.sock") || len(d.GetPluginsToRegister()) != 0 {
		t.Fatal("removed plugin still desired")
	}
}

func TestActualState(t *testing.T) {
	a := &ActualState{byPath: map[string]PluginInfo{}}
	if err := a.AddPlugin(PluginInfo{}); !errors.Is(err, ErrEmptySocketPath) {
		t.Fatalf("empty path: err = %v", err)
	}
	p := PluginInfo{SocketPath: "/r/b.sock", ID: "1"}
	if err := a.AddPlugin(p); err != nil {
		t.Fatal(err)
	}
	if err := a.AddPlugin(PluginInfo{SocketPath: "/r/a.sock", ID: "2"}); err != nil {
		t.Fatal(err)
	}
	if got := a.GetRegisteredPlugins(); len(got) != 2 || got[0].SocketPath != "/r/a.sock" {
		t.Fatalf("registered = %+v, want two sorted by path", got)
	}
	if !a.PluginExistsWithCorrectID(p) {
		t.Error("same id not found")
	}
	if a.PluginExistsWithCorrectID(PluginInfo{SocketPath: "/r/b.sock", ID: "9"}) {
		t.Error("wrong id found")
	}
	a.RemovePlugin("/r/b.sock")
	if a.PluginExistsWithCorrectID(p) {
		t.Error("removed plugin found")
	}
}
