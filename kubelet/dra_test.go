package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/world"
)

// TestDRAHandlerStandalone: a standalone kubelet has the DRA handler too. A DRA driver's plugin
// registers and connects; without an API server no wipe is scheduled. After a kubelet restart the
// new process's watcher finds the socket and the plugin registers with the new handler.
func TestDRAHandlerStandalone(t *testing.T) {
	plugins := world.NewPlugins("/var/lib/kubelet/plugins_registry")
	e := newEnv(t, envOptions{standalone: true, plugins: plugins})
	e.settle()
	sock := plugins.Create("dra.example.com-reg.sock", world.PluginSpec{Type: registerapi.DRAPlugin, Name: "dra.example.com",
		Endpoint: "/var/lib/kubelet/plugins/dra.example.com/dra.sock", Versions: []string{"v1beta1.DRAPlugin"}})
	if err := e.k.Plugins.SocketCreated(sock); err != nil {
		t.Fatal(err)
	}
	e.runFor(2 * time.Second)
	want := []string{
		"registered driver=dra.example.com endpoint=/var/lib/kubelet/plugins/dra.example.com/dra.sock service=v1beta1.DRAPlugin plugins=1",
		"connected driver=dra.example.com endpoint=/var/lib/kubelet/plugins/dra.example.com/dra.sock",
	}
	if diff := cmp.Diff(want, draEvents(e.trace())); diff != "" {
		t.Errorf("dra events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"dra.example.com": {"/var/lib/kubelet/plugins/dra.example.com/dra.sock"}}, e.k.Plugins.DRA.Drivers()); diff != "" {
		t.Errorf("drivers (-want +got):\n%s", diff)
	}

	mark := e.rec.Len()
	e.restart(plugins)
	e.runFor(2 * time.Second)
	if diff := cmp.Diff(want, draEvents(e.rec.EventsSince(mark))); diff != "" {
		t.Errorf("dra events after the restart (-want +got):\n%s", diff)
	}
}

func draEvents(evs []trace.Event) []string {
	var got []string
	for _, ev := range evs {
		if ev.Component == trace.DRA {
			got = append(got, string(ev.Event)+" "+ev.Message)
		}
	}
	return got
}
