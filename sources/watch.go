package sources

import (
	"strconv"

	"github.com/fsnotify/fsnotify"
)

// WatchOp is what a watch event says happened to a manifest file: the kubelet's podEventType.
type WatchOp int

// The watch operations.
const (
	WatchAdd WatchOp = iota
	WatchModify
	WatchDelete
)

// String returns the operation's name, or "WatchOp(n)" for a value outside the enum.
func (op WatchOp) String() string {
	switch op {
	case WatchAdd:
		return "add"
	case WatchModify:
		return "modify"
	case WatchDelete:
		return "delete"
	}
	return "WatchOp(" + strconv.Itoa(int(op)) + ")"
}

// WatchEvent is one change to a path under the static pod path, as the file watcher reports it.
type WatchEvent struct {
	// Path is the full path of the file that changed.
	Path string
	// Op is what happened to it.
	Op WatchOp
}

// watchOpFor maps an fsnotify operation to a WatchOp in the kubelet's precedence order: Create is
// add; Write and Chmod are modify; Remove and Rename are delete. ok is false for anything else,
// which the kubelet ignores. On Linux a file moved into the directory arrives as Create and one
// moved out as Rename.
func watchOpFor(op fsnotify.Op) (watchOp WatchOp, ok bool) {
	switch {
	case op.Has(fsnotify.Create):
		return WatchAdd, true
	case op.Has(fsnotify.Write), op.Has(fsnotify.Chmod):
		return WatchModify, true
	case op.Has(fsnotify.Remove), op.Has(fsnotify.Rename):
		return WatchDelete, true
	}
	return 0, false
}
