package pluginmanager

import (
	"errors"
	"slices"
	"time"
)

// ErrEmptySocketPath is returned when a plugin is added to a cache without a socket path.
var ErrEmptySocketPath = errors.New("socket path is empty")

// PluginInfo is one plugin in a cache, the kubelet's cache.PluginInfo.
type PluginInfo struct {
	// SocketPath is the registration socket, the key of both caches.
	SocketPath string
	// Timestamp is when the socket was last seen created.
	Timestamp time.Time
	// ID is fresh on every create event: the kubelet's UUID, which tells a recreated socket from
	// the old one.
	ID string
	// Handler is the handler chosen at registration; nil in the desired state.
	Handler Handler
	// Name and Endpoint are the plugin's answer to GetInfo, the endpoint defaulted to SocketPath.
	Name, Endpoint string
}

// DesiredState is the kubelet's desiredStateOfWorld: the sockets the watcher has seen, keyed by
// path.
type DesiredState struct {
	now    func() time.Time
	newID  func() string
	byPath map[string]PluginInfo
}

// AddOrUpdatePlugin records a socket with a fresh timestamp and id, even if the path is present:
// a socket recreated between two passes must be seen as a new plugin instance.
// It returns the new id.
func (d *DesiredState) AddOrUpdatePlugin(path string) (string, error) {
	if path == "" {
		return "", ErrEmptySocketPath
	}
	p := PluginInfo{SocketPath: path, Timestamp: d.now(), ID: d.newID()}
	d.byPath[path] = p
	return p.ID, nil
}

// RemovePlugin forgets a socket; an unknown path is a no-op.
func (d *DesiredState) RemovePlugin(path string) { delete(d.byPath, path) }

// PluginExists reports whether the socket is desired.
func (d *DesiredState) PluginExists(path string) bool {
	_, ok := d.byPath[path]
	return ok
}

// GetPluginsToRegister returns every desired plugin, sorted by socket path (the kubelet returns
// map order).
func (d *DesiredState) GetPluginsToRegister() []PluginInfo { return sorted(d.byPath) }

// ActualState is the kubelet's actualStateOfWorld: the plugins registered, or being registered,
// keyed by socket path.
type ActualState struct {
	byPath map[string]PluginInfo
}

// AddPlugin records a plugin, replacing one at the same path.
func (a *ActualState) AddPlugin(p PluginInfo) error {
	if p.SocketPath == "" {
		return ErrEmptySocketPath
	}
	a.byPath[p.SocketPath] = p
	return nil
}

// RemovePlugin forgets a socket; an unknown path is a no-op.
func (a *ActualState) RemovePlugin(path string) { delete(a.byPath, path) }

// GetRegisteredPlugins returns every registered plugin, sorted by socket path.
func (a *ActualState) GetRegisteredPlugins() []PluginInfo { return sorted(a.byPath) }

// PluginExistsWithCorrectID reports whether a plugin at p's path is registered with p's id.
func (a *ActualState) PluginExistsWithCorrectID(p PluginInfo) bool {
	got, ok := a.byPath[p.SocketPath]
	return ok && got.ID == p.ID
}

func sorted(m map[string]PluginInfo) []PluginInfo {
	out := make([]PluginInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b PluginInfo) int {
		switch {
		case a.SocketPath < b.SocketPath:
			return -1
		case a.SocketPath > b.SocketPath:
			return 1
		}
		return 0
	})
	return out
}
