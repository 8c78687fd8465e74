package pluginmanager

import "github.com/minikubelet/minikubelet/metrics"

// The states of plugin_manager_total_plugins.
const (
	StateActual  = "actual_state_of_world"
	StateDesired = "desired_state_of_world"
)

// Sample is one value of the gauge plugin_manager_total_plugins{socket_path, state}, in the
// node metrics' own type so that a driver hands it over as it is.
type Sample = metrics.PluginCount

// TotalPlugins is the kubelet's plugin manager metric: per socket path, how many plugins each
// cache holds (0 or 1, as both caches are keyed by socket path), actual state first, each sorted
// by path.
func (m *Manager) TotalPlugins() []Sample {
	var out []Sample
	for _, p := range m.asw.GetRegisteredPlugins() {
		out = append(out, Sample{SocketPath: p.SocketPath, State: StateActual, Value: 1})
	}
	for _, p := range m.dsw.GetPluginsToRegister() {
		out = append(out, Sample{SocketPath: p.SocketPath, State: StateDesired, Value: 1})
	}
	return out
}
