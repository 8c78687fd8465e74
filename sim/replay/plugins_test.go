package replay

import (
	"errors"
	"strings"
	"testing"
)

func TestPluginStepValidation(t *testing.T) {
	for _, tc := range []struct {
		name, step, want string
	}{
		{"unknown type", `createPluginSocket: {name: a.sock, type: PodResources, pluginName: x}`, `type "PodResources": want DevicePlugin, CSIPlugin or DRAPlugin`},
		{"dra devices without api", `createPluginSocket: {name: a.sock, type: DRAPlugin, pluginName: x, devices: 2}`, "needs the api source"},
		{"dra too many devices", `createPluginSocket: {name: a.sock, type: DRAPlugin, pluginName: x, devices: 129}`, "a ResourceSlice holds at most 128"},
		{"dra negative devices", `createPluginSocket: {name: a.sock, type: DRAPlugin, pluginName: x, devices: -1}`, "devices must not be negative"},
		{"dra with csi fields", `createPluginSocket: {name: a.sock, type: DRAPlugin, pluginName: x, nodeID: node-id}`, "are a CSIPlugin's"},
		{"topology key", `createPluginSocket: {name: a.sock, type: CSIPlugin, pluginName: x, accessibleTopology: {"bad key": z}}`, `accessibleTopology key "bad key"`},
		{"topology value", `createPluginSocket: {name: a.sock, type: CSIPlugin, pluginName: x, accessibleTopology: {zone: "a b"}}`, `accessibleTopology["zone"] "a b"`},
		{"csi without api", `createPluginSocket: {name: a.sock, type: CSIPlugin, pluginName: x}`, "needs the api source"},
		{"absolute socket", `removePluginSocket: {name: /run/a.sock}`, "must be a relative path"},
		{"escaping socket", `removePluginSocket: {name: ../a.sock}`, "must be a relative path"},
		{"unknown call", `pluginFails: {name: a.sock, call: Allocate, times: 1}`, `call "Allocate"`},
		{"no times", `pluginFails: {name: a.sock, call: GetInfo}`, "times must be positive"},
		{"empty expectNode", `expectNode: {resource: example.com/gpu}`, "checks nothing"},
		{"missing device", `deviceHealth: {resource: example.com/gpu}`, "device is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "name: x\nsources: [file]\nsteps:\n- at: 1s\n  " + tc.step + "\n"
			_, err := Parse("x.yaml", []byte(doc), LoadOptions{})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse() = %v, want an ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

// TestDRAPluginWithoutAPI: a DRA driver registers with a standalone kubelet, which has the DRA
// handler too: it needs no source.
func TestDRAPluginWithoutAPI(t *testing.T) {
	doc := "name: x\nsources: [file]\nsteps:\n- at: 1s\n  createPluginSocket: {name: a.sock, type: DRAPlugin, pluginName: x, versions: [v1.DRAPlugin]}\n"
	if _, err := Parse("x.yaml", []byte(doc), LoadOptions{}); err != nil {
		t.Errorf("Parse() = %v", err)
	}
}
