// Package filewatch is the file system watch a process of many kubelets shares: one fsnotify
// watcher (one inotify instance) whose events it routes, by directory, to each node's Watch.
//
// The kubelet has no counterpart: each kubelet opens its own inotify instances, one for the
// plugin watcher (pkg/kubelet/pluginmanager/pluginwatcher) and one per watch of the static pod
// path (pkg/kubelet/config/file_linux.go). N kubelets in one process would open N of them and
// meet fs.inotify.max_user_instances (128 by default); Shared stands for them, as the fleet's
// one pod watch stands for N pod watches.
//
// Each Watch sees what a watcher of its own would have: the events of the paths it added
// (the entries of a watched directory, and a watched path itself), each once, and its Add and
// Remove are its own: a path stays watched while any Watch holds it. Events queue per Watch up
// to the kernel's default fs.inotify.max_queued_events; past that, as the kernel does, the Watch
// gets fsnotify.ErrEventOverflow and the events are lost.
//
//	fsnotify ─▶ Shared.Run ─▶ route (dir of the name, or the name itself) ─▶ Watch queue ─▶ Wake
//
// Shared and Watch are runner-side: the cores (pluginwatcher.Watcher, sources.File) take
// events from their runners, which alone use this package.
package filewatch
