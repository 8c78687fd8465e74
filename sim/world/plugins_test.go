package world

import (
	"context"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// TestRegistryWalk: the registry lists every socket and the directories their paths imply, in
// the order filepath.WalkDir visits them, so that a restarted kubelet's first traversal finds
// them.
func TestRegistryWalk(t *testing.T) {
	w := NewPlugins("/r")
	w.Create("b.sock", PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/b"})
	w.Create("csi/x/reg.sock", PluginSpec{Type: registerapi.CSIPlugin, Name: "x"})
	w.Create("a.sock", PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/a"})
	var got []string
	err := w.WalkDir("/r", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		kind := "file"
		switch {
		case d.IsDir():
			kind = "dir"
		case d.Type()&fs.ModeSocket != 0:
			kind = "socket"
		}
		got = append(got, kind+" "+p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dir /r", "socket /r/a.sock", "socket /r/b.sock", "dir /r/csi", "dir /r/csi/x", "socket /r/csi/x/reg.sock"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WalkDir (-want +got):\n%s", diff)
	}
}

// recorder is a device manager's end of a stream.
type recorder struct {
	updates [][]string
}

func (r *recorder) Update(devs []*pluginapi.Device) {
	var s []string
	for _, d := range devs {
		s = append(s, d.ID+"="+d.Health)
	}
	r.updates = append(r.updates, s)
}

func (r *recorder) End(error) { r.updates = append(r.updates, []string{"end"}) }

// TestDevicePluginStreams: a connection sends the devices at once and at each health change,
// until it is closed or the kubelet stops; scripted failures are consumed one by one.
func TestDevicePluginStreams(t *testing.T) {
	ctx := context.Background()
	w := NewPlugins("/r")
	sock := w.Create("gpu.sock", PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/gpu", Versions: []string{"v1beta1"}, Devices: 2})
	if err := w.FailNext("gpu.sock", "GetDevicePluginOptions", 1); err != nil {
		t.Fatal(err)
	}
	conn, err := w.Connect(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.GetDevicePluginOptions(ctx); err == nil || err.Error() != "GetDevicePluginOptions: scripted failure" {
		t.Errorf("first GetDevicePluginOptions = %v, want the scripted failure", err)
	}
	if _, err := conn.GetDevicePluginOptions(ctx); err != nil {
		t.Errorf("second GetDevicePluginOptions = %v", err)
	}
	r := &recorder{}
	conn.ListAndWatch(r)
	if err := w.SetHealth("example.com/gpu", "gpu-1", false); err != nil {
		t.Fatal(err)
	}
	w.KubeletStopped()
	if err := w.SetHealth("example.com/gpu", "gpu-0", false); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"gpu-0=Healthy", "gpu-1=Healthy"}, {"gpu-0=Healthy", "gpu-1=Unhealthy"}}
	if diff := cmp.Diff(want, r.updates); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	if _, err := w.Connect(ctx, "/r/none.sock"); err == nil {
		t.Errorf("Connect to a missing endpoint succeeded")
	}
	if err := w.SetHealth("example.com/gpu", "gpu-9", true); err == nil {
		t.Errorf("SetHealth of a missing device succeeded")
	}
}

// TestDRAConnections: the DRA handler's connection to a driver's endpoint comes up when started
// while the driver serves it, goes down when its socket is removed and up again when a plugin
// serves it anew; one to a plugin without an endpoint follows its registration socket; closing
// reports the end of a live one, and a stopped kubelet's connections report nothing.
func TestDRAConnections(t *testing.T) {
	w := NewPlugins("/r")
	var got []string
	watch := func(name string) func(bool) {
		return func(up bool) {
			if up {
				got = append(got, name+" up")
			} else {
				got = append(got, name+" down")
			}
		}
	}
	const ep = "/p/dra.sock"
	w.Create("d-reg.sock", PluginSpec{Type: registerapi.DRAPlugin, Name: "d", Endpoint: ep})
	w.Create("e-reg.sock", PluginSpec{Type: registerapi.DRAPlugin, Name: "e"})
	w.Create("dev-reg.sock", PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/x", Endpoint: "/p/x.sock"})
	d, _ := w.DRA().Connect(ep, watch("d"))
	e, _ := w.DRA().Connect("/r/e-reg.sock", watch("e"))
	gone, _ := w.DRA().Connect("/p/none.sock", watch("none"))
	d.Start()
	e.Start()
	gone.Start()
	if _, err := w.Remove("d-reg.sock"); err != nil {
		t.Fatal(err)
	}
	w.Create("d2-reg.sock", PluginSpec{Type: registerapi.DRAPlugin, Name: "d", Endpoint: ep})
	if _, err := w.Remove("e-reg.sock"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Remove("dev-reg.sock"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	w.Create("e-reg.sock", PluginSpec{Type: registerapi.DRAPlugin, Name: "e"})
	w.KubeletStopped()
	w.Remove("e-reg.sock")
	want := []string{"d up", "e up", "d down", "d up", "e down", "d down", "e up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// TestNodeGetInfoTopology: a CSI driver answers NodeGetInfo with its accessible topology, a copy
// the kubelet may keep.
func TestNodeGetInfoTopology(t *testing.T) {
	w := NewPlugins("/r")
	w.Create("c-reg.sock", PluginSpec{Type: registerapi.CSIPlugin, Name: "c", Endpoint: "/p/csi.sock", NodeID: "n1",
		AccessibleTopology: map[string]string{"zone": "a"}})
	info, err := w.NodeGetInfo(context.Background(), "/p/csi.sock")
	if err != nil {
		t.Fatal(err)
	}
	info.Topology["zone"] = "changed"
	again, _ := w.NodeGetInfo(context.Background(), "/p/csi.sock")
	if diff := cmp.Diff(map[string]string{"zone": "a"}, again.Topology); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
}
