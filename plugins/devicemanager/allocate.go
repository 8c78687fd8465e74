package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// allocation is the devices one container holds for one resource.
type allocation struct {
	ids  []string
	resp []byte // the serialized ContainerAllocateResponse
}

// ErrAllocate is wrapped by every allocation failure.
var ErrAllocate = errors.New("device allocation failed")

// AdmissionReason is the reason of a pod the device manager could not serve.
const AdmissionReason = "UnexpectedAdmissionError"

func (m *Manager) record(uid, container, res string, ids []string, resp []byte) {
	if m.pods[uid] == nil {
		m.pods[uid] = map[string]map[string]allocation{}
	}
	if m.pods[uid][container] == nil {
		m.pods[uid][container] = map[string]allocation{}
	}
	m.pods[uid][container][res] = allocation{ids: ids, resp: resp}
}

// inUse is every device of res some container holds.
func (m *Manager) inUse(res string) map[string]bool {
	out := map[string]bool{}
	for _, cs := range m.pods {
		for _, rs := range cs {
			for _, id := range rs[res].ids {
				out[id] = true
			}
		}
	}
	return out
}

// Admit is the device manager's part of pod admission, the kubelet's resource allocator: it
// allocates devices to every container that requests device plugin resources, init containers
// first. A failure rejects the pod with AdmissionReason and the kubelet's message.
func (m *Manager) Admit(ctx context.Context, pod *v1.Pod) (ok bool, reason, message string) {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if err := m.Allocate(ctx, pod, &cs[i]); err != nil {
				msg := fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
				m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindReject, Pod: pod.Namespace + "/" + pod.Name, UID: string(pod.UID),
					Reason: AdmissionReason, Message: msg, Func: "Allocate"})
				return false, AdmissionReason, msg
			}
		}
	}
	return true, "", ""
}

// Allocate gives a container the devices its limits ask for, for every resource a device plugin
// manages, calling the plugin's GetPreferredAllocation (when offered) and Allocate.
func (m *Manager) Allocate(ctx context.Context, pod *v1.Pod, c *v1.Container) error {
	uid := string(pod.UID)
	for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
		res := string(name)
		if !m.isDevicePluginResource(res) {
			continue
		}
		q := c.Resources.Limits[name]
		n := int(q.Value())
		if n == 0 {
			continue
		}
		if _, held := m.pods[uid][c.Name][res]; held {
			continue
		}
		ids, err := m.devicesToAllocate(ctx, res, n)
		if err != nil {
			return err
		}
		e := m.endpoints[res]
		resp, err := e.plugin.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
		if err != nil {
			return kerr(ErrAllocate, "%v", err)
		}
		if len(resp.ContainerResponses) == 0 {
			return kerr(ErrAllocate, "no containers return in allocation response %v", resp)
		}
		b, err := proto.Marshal(resp.ContainerResponses[0])
		if err != nil {
			return kerr(ErrAllocate, "%s: %v", res, err)
		}
		m.record(uid, c.Name, res, ids, b)
		m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindAllocate, Pod: pod.Namespace + "/" + pod.Name, UID: uid,
			Container: c.Name, Func: "Allocate", Message: fmt.Sprintf("resource=%s devices=%s", res, strings.Join(ids, ","))})
		m.writeCheckpoint()
	}
	return nil
}

func (m *Manager) isDevicePluginResource(res string) bool {
	if _, ok := m.healthy[res]; ok {
		return true
	}
	return len(m.inUse(res)) > 0
}

// devicesToAllocate is devicesToAllocate: n healthy devices no container holds, the plugin's
// preference first when it offers one, else in id order.
func (m *Manager) devicesToAllocate(ctx context.Context, res string, n int) ([]string, error) {
	healthy, ok := m.healthy[res]
	if !ok {
		return nil, kerr(ErrAllocate, "cannot allocate unregistered device %s", res)
	}
	if len(healthy) == 0 {
		return nil, kerr(ErrAllocate, "no healthy devices present; cannot allocate unhealthy devices %s", res)
	}
	e, ok := m.endpoints[res]
	if !ok {
		return nil, kerr(ErrAllocate, "unknown Device Plugin %s", res)
	}
	if e.stopped() || e.plugin == nil {
		return nil, kerr(ErrAllocate, "endpoint %s has been stopped", res)
	}
	used := m.inUse(res)
	var available []string
	for _, id := range slices.Sorted(maps.Keys(healthy)) {
		if !used[id] {
			available = append(available, id)
		}
	}
	if len(available) < n {
		return nil, kerr(ErrAllocate, "requested number of devices unavailable for %s. Requested: %d, Available: %d", res, n, len(available))
	}
	if e.options.GetGetPreferredAllocationAvailable() {
		resp, err := e.plugin.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs: available, AllocationSize: int32(n),
		}}})
		if err == nil && len(resp.ContainerResponses) > 0 {
			if picked := validPreference(resp.ContainerResponses[0].DeviceIDs, available, n); picked != nil {
				return picked, nil
			}
		}
	}
	return available[:n], nil
}

// validPreference returns the plugin's preferred ids when they are n distinct available devices.
func validPreference(pref, available []string, n int) []string {
	if len(pref) != n {
		return nil
	}
	seen := map[string]bool{}
	for _, id := range pref {
		if seen[id] || !slices.Contains(available, id) {
			return nil
		}
		seen[id] = true
	}
	return slices.Sorted(slices.Values(pref))
}

// RemovePods frees the devices of every pod not in active, the kubelet's UpdateAllocatedDevices.
func (m *Manager) RemovePods(active map[string]bool) {
	changed := false
	for uid := range m.pods {
		if !active[uid] {
			delete(m.pods, uid)
			changed = true
		}
	}
	if changed {
		m.writeCheckpoint()
	}
}
