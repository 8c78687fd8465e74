package replay

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The static pod directory's steps: the file source sees what inotify would deliver.

// WriteManifest writes a file into the static pod directory. Content may be broken on purpose.
type WriteManifest struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// RemoveManifest deletes a file from the static pod directory.
type RemoveManifest struct {
	Name string `json:"name"`
}

// RenameManifest renames a file inside the static pod directory.
type RenameManifest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// The kinds of this file and what they declare.
var (
	_ change     = (*WriteManifest)(nil)
	_ change     = (*RemoveManifest)(nil)
	_ change     = (*RenameManifest)(nil)
	_ sourceUser = (*WriteManifest)(nil)
	_ sourceUser = (*RemoveManifest)(nil)
	_ sourceUser = (*RenameManifest)(nil)
)

func (*WriteManifest) source() string  { return podconfig.FileSource }
func (*RemoveManifest) source() string { return podconfig.FileSource }
func (*RenameManifest) source() string { return podconfig.FileSource }

func (w *WriteManifest) validate() error  { return manifestName(w.Name) }
func (r *RemoveManifest) validate() error { return manifestName(r.Name) }
func (r *RenameManifest) validate() error {
	return errors.Join(manifestName(r.From), manifestName(r.To))
}

// apply writes the file and delivers what inotify would: a new file is IN_CREATE then IN_MODIFY
// (add, then modify), a rewritten one IN_MODIFY alone.
func (w *WriteManifest) apply(_ context.Context, e *engine, n *node) {
	evs := n.files.Write(w.Name, []byte(w.Content))
	e.stepEvent(trace.KindWriteManifest, "", manifestPath(w.Name))
	n.kubelet.StaticPodEvents(evs)
}

func (r *RemoveManifest) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindRemoveManifest, "", manifestPath(r.Name))
	evs, err := n.files.Remove(r.Name)
	if err != nil {
		e.stepError(trace.KindRemoveManifest, err)
		return
	}
	n.kubelet.StaticPodEvents(evs)
}

// apply moves the file: inotify reports IN_MOVED_FROM for the old name (a delete for the file
// source) and IN_MOVED_TO for the new one (an add).
func (r *RenameManifest) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindRenameManifest, "", manifestPath(r.From)+" -> "+manifestPath(r.To))
	evs, err := n.files.Rename(r.From, r.To)
	if err != nil {
		e.stepError(trace.KindRenameManifest, err)
		return
	}
	n.kubelet.StaticPodEvents(evs)
}

func manifestPath(name string) string { return path.Join(StaticPodPath, name) }

func manifestName(name string) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("manifest name %q must be a plain file name inside the static pod directory", name)
	}
	return nil
}
