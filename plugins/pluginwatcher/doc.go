// Package pluginwatcher watches the kubelet's plugin registry directory (plugins_registry) for
// registration sockets and puts them in the plugin manager's desired state of the world.
//
// It mirrors pkg/kubelet/pluginmanager/pluginwatcher (plugin_watcher.go):
//
//	Start: MkdirAll(dir, 0755) ─▶ watch dir ─▶ walk the tree: watch every sub-directory,
//	       every socket found is handled as a create event (a walk error is only reported)
//	Create: stat; a name starting with "." is ignored; a directory is traversed; a socket is
//	        added to the desired state with a fresh id (even if its path is already there)
//	Remove: the path leaves the desired state
//	Write, Chmod, Rename: ignored (a socket renamed away stays registered)
//
// Nothing is retried: a create event that fails (the file vanished before its stat) is only
// reported, and the plugin has to recreate its socket.
//
// Watcher is a core: it reads the file system through FS and adds watches through Watches, and
// never starts a goroutine. Run (run.go) feeds it the events of its share of the process's one
// fsnotify watcher (kubelet/filewatch), where each kubelet opens its own; replay calls Create and
// Remove directly over a fake FS.
package pluginwatcher
